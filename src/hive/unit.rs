//! A container unit's state as the rules see it: systemd's `ActiveState`
//! and the few facts the roster and the crash rule read. The driver
//! (`containers`) fills these in; the rules only read them.

/// systemd's `ActiveState` of a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActiveState {
    Active,
    Reloading,
    Inactive,
    Failed,
    Activating,
    Deactivating,
    /// `maintenance`, `refreshing` or anything a newer systemd adds.
    Other,
}

impl ActiveState {
    pub fn parse(value: &str) -> Self {
        match value {
            "active" => Self::Active,
            "reloading" => Self::Reloading,
            "inactive" => Self::Inactive,
            "failed" => Self::Failed,
            "activating" => Self::Activating,
            "deactivating" => Self::Deactivating,
            _ => Self::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Reloading => "reloading",
            Self::Inactive => "inactive",
            Self::Failed => "failed",
            Self::Activating => "activating",
            Self::Deactivating => "deactivating",
            Self::Other => "other",
        }
    }
}

/// What the driver knows of one container's unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitState {
    pub active: ActiveState,
    /// systemd's `SubState` (`running`, `dead`, `exited`, ...).
    pub sub: String,
    /// systemd's `Result` of the service (`success`, `signal`, `exit-code`, ...).
    pub result: String,
    /// While the unit runs: unix seconds when it became active (systemd's
    /// `ActiveEnterTimestamp`); `None` when not running or not known.
    pub since: Option<i64>,
}

impl UnitState {
    /// A unit that is loaded but not running.
    pub fn inactive() -> Self {
        Self {
            active: ActiveState::Inactive,
            sub: "dead".into(),
            result: "success".into(),
            since: None,
        }
    }

    /// A unit that is up.
    pub fn running() -> Self {
        Self {
            active: ActiveState::Active,
            sub: "running".into(),
            result: "success".into(),
            since: None,
        }
    }

    /// `running` on the roster: the unit is active.
    pub fn is_running(&self) -> bool {
        matches!(self.active, ActiveState::Active | ActiveState::Reloading)
    }

    /// Between two states: `activating` or `deactivating` (a unit going
    /// down, or coming back by its restart rule).
    pub fn is_changing(&self) -> bool {
        matches!(
            self.active,
            ActiveState::Activating | ActiveState::Deactivating
        )
    }

    /// `failed` on the roster: the unit is in systemd's failed state.
    pub fn is_failed(&self) -> bool {
        self.active == ActiveState::Failed
    }
}
