//! Container lifecycle: the scope rules, the answer budget, and the agent
//! registry kept in step with the containers.
//!
//! Every verb runs its work in a task of its own and waits for it at most
//! [`ANSWER_BUDGET`](super::ANSWER_BUDGET): a graceful stop may take the whole stop deadline, but
//! the client must hear back within 5 s. Past the budget the answer says
//! "still in progress" and the work goes on; the roster shows the result.

use std::future::Future;
use std::time::Duration;

use tokio::task::JoinSet;

use super::budget::within_budget;
use super::claim::Claim;
use super::messaging::Wakes;
use super::{Hive, HiveError};
use crate::containers::{ContainerSpec, DriverError, Outcome, StopMode, UnitState};
use crate::hive::names;
use crate::service::approvals::record_resolved;
use crate::store::agents::{self, Intent};
use crate::store::approvals;
use crate::store::purge::{self, Purged};
use crate::wire::events::HelperEvent;
use crate::wire::host::{LifecycleScope, MAX_STOP_DEADLINE_SECS, Signal};
use crate::wire::ident::Ident;

/// Run `op` for every name (concurrently, or one after another), within the
/// answer budget.
async fn for_each<F, Fut>(
    hive: &Hive,
    verb: &'static str,
    names: Vec<Ident>,
    sequential: bool,
    op: F,
) -> Result<(), HiveError>
where
    F: Fn(Hive, Ident) -> Fut + Send + 'static,
    Fut: Future<Output = Result<Outcome, DriverError>> + Send + 'static,
{
    let listed: Vec<String> = names.iter().map(ToString::to_string).collect();
    let hive = hive.clone();
    let work = async move {
        let mut failures = Vec::new();
        let mut pending = Vec::new();
        let mut sort = |name: Ident, done: Result<Outcome, DriverError>| match done {
            Ok(Outcome::Pending) => pending.push(name.to_string()),
            Ok(Outcome::Done | Outcome::AlreadyInState) => {}
            Err(e) => failures.push((name, e)),
        };
        // Each agent's row is brought up to date once its action ends, so
        // the roster read after the answer shows it.
        if sequential {
            for name in names {
                let done = op(hive.clone(), name.clone()).await;
                hive.publish(&name).await;
                sort(name, done);
            }
        } else {
            let mut set = JoinSet::new();
            for name in names {
                let fut = op(hive.clone(), name.clone());
                let h = hive.clone();
                set.spawn(async move {
                    let done = fut.await;
                    h.publish(&name).await;
                    (name, done)
                });
            }
            while let Some(joined) = set.join_next().await {
                if let Ok((name, done)) = joined {
                    sort(name, done);
                }
            }
        }
        for (name, e) in &failures {
            tracing::warn!(agent = %name, "{name}: {verb} failed: {e}");
        }
        failures.sort_by(|a, b| a.0.cmp(&b.0));
        pending.sort();
        (failures, pending)
    };
    let (mut failures, pending) = within_budget(verb, listed, work).await?;
    match failures.len() {
        // A job that goes on in systemd past the driver's wait (or whose
        // bus went away) is "still in progress", as past the answer budget.
        0 if !pending.is_empty() => Err(HiveError::StillRunning {
            verb,
            agents: pending,
        }),
        0 => Ok(()),
        1 => {
            let (agent, error) = failures.remove(0);
            Err(HiveError::Driver { agent, error })
        }
        _ => Err(HiveError::Partial(failures)),
    }
}

impl Hive {
    /// The managed agents a scope selects. Names must all be managed.
    pub async fn select(&self, scope: &LifecycleScope) -> Result<Vec<Ident>, HiveError> {
        let all = self.list().await?;
        if scope.selects_all_agents() {
            return Ok(all);
        }
        let mut names = scope.agent_names.clone();
        names.sort();
        names.dedup();
        if let Some(unknown) = names.iter().find(|n| !all.contains(n)) {
            return Err(HiveError::UnknownAgent(unknown.clone()));
        }
        Ok(names)
    }

    /// Start a managed agent's container, making it first when the host has
    /// none: the registry says the agent belongs to this hive, so a missing
    /// container (the manager's on a new host, an image removed by hand) is
    /// created on demand rather than refused.
    async fn start_one(self, name: Ident) -> Result<Outcome, DriverError> {
        self.clear_going_down(&name);
        match self.start_container(&name).await {
            Err(DriverError::NoSuchUnit { .. }) => {
                let spec = self
                    .built_spec(&name)
                    .await
                    .map_err(|e| DriverError::Setup(e.to_string()))?;
                tracing::info!(agent = %name, "{name}: no container yet; creating it");
                self.driver().create(&name, &spec).await?;
                self.built(&name, &spec).await;
                self.driver().start(&name).await
            }
            started => started,
        }
    }

    async fn stop_one(self, name: Ident, mode: StopMode) -> Result<Outcome, DriverError> {
        self.mark_going_down(&name);
        let outcome = self.driver().stop(&name, mode).await;
        match outcome {
            Ok(Outcome::AlreadyInState) => self.clear_going_down(&name),
            // The mark stays: the unit going down later is this stop's.
            Ok(Outcome::Pending) | Err(_) => {}
            Ok(Outcome::Done) => {
                self.reset_failed_after_stop(&name).await;
                let agent = name.to_string();
                self.mail().to_manager(HelperEvent::Killed { agent }).await;
            }
        }
        outcome
    }

    async fn restart_one(self, name: Ident) -> Result<Outcome, DriverError> {
        let _queue = self.build_queue().await;
        self.mark_going_down(&name);
        self.driver().restart(&name).await
    }

    /// How to stop: gracefully within `deadline_secs` (capped at
    /// [`MAX_STOP_DEADLINE_SECS`]; the configured deadline when `None`; 0 is
    /// a hard stop, as `podman stop -t 0`), or hard.
    pub(super) fn stop_mode(&self, graceful: bool, deadline_secs: Option<u64>) -> StopMode {
        match (graceful, deadline_secs) {
            (false, _) | (true, Some(0)) => StopMode::Hard,
            (true, Some(secs)) => StopMode::Graceful {
                deadline: Duration::from_secs(secs.min(MAX_STOP_DEADLINE_SECS)),
            },
            (true, None) => StopMode::Graceful {
                deadline: self.config().stop_deadline(),
            },
        }
    }

    /// Start the containers the scope selects.
    pub async fn start(&self, scope: &LifecycleScope) -> Result<(), HiveError> {
        let names = self.select(scope).await?;
        for_each(self, "start", names, false, Hive::start_one).await
    }

    /// Stop the containers the scope selects.
    pub async fn stop(
        &self,
        scope: &LifecycleScope,
        graceful: bool,
        deadline_secs: Option<u64>,
    ) -> Result<(), HiveError> {
        let names = self.select(scope).await?;
        let mode = self.stop_mode(graceful, deadline_secs);
        for_each(self, "stop", names, false, move |h, n| h.stop_one(n, mode)).await
    }

    /// Stop one container gracefully.
    pub async fn kill(&self, name: &Ident) -> Result<(), HiveError> {
        self.require(name).await?;
        let mode = self.stop_mode(true, None);
        for_each(self, "kill", vec![name.clone()], false, move |h, n| {
            h.stop_one(n, mode)
        })
        .await
    }

    /// Send a signal to one container's init (a systemd). KILL (it ends)
    /// and INT (it reboots) take the container down: that is the
    /// operator's deed, not a crash, if it happens within the stop window
    /// (and a failed unit is reset, as after a stop). systemd takes every
    /// other signal in its stride, so a crash after one is still a crash.
    pub async fn signal(&self, name: &Ident, signal: Signal) -> Result<(), HiveError> {
        self.require(name).await?;
        if !self
            .driver()
            .view()
            .get(name)
            .is_some_and(UnitState::is_running)
        {
            return Err(HiveError::NotRunning(name.clone()));
        }
        for_each(
            self,
            "signal",
            vec![name.clone()],
            false,
            move |h, n| async move {
                let ends = matches!(signal, Signal::Kill | Signal::Int);
                if ends {
                    h.mark_going_down(&n);
                }
                let outcome = h.driver().signal(&n, signal).await;
                if ends && !matches!(outcome, Ok(Outcome::Done)) {
                    h.clear_going_down(&n);
                }
                if let Ok(Outcome::Done) = outcome {
                    tracing::info!(agent = %n, "{n}: sent SIG{} to its init by the operator", signal.name());
                }
                outcome
            },
        )
        .await
    }

    /// Stop and start one container.
    pub async fn restart(&self, name: &Ident) -> Result<(), HiveError> {
        self.require(name).await?;
        for_each(
            self,
            "restart",
            vec![name.clone()],
            false,
            Hive::restart_one,
        )
        .await
    }

    /// Restart every running container, one after another: the live
    /// containers, as the seed's wrapper iterates them. A stopped agent
    /// (the manager too) stays stopped: "restart" never starts what an
    /// operator stopped.
    pub async fn restart_all(&self) -> Result<(), HiveError> {
        let view = self.driver().view();
        let names = self
            .list()
            .await?
            .into_iter()
            .filter(|n| view.get(n).is_some_and(UnitState::is_running))
            .collect();
        for_each(self, "restart", names, true, Hive::restart_one).await
    }

    /// Create and start a sub-agent of the manager, within the answer budget.
    pub async fn spawn(&self, name: &Ident) -> Result<(), HiveError> {
        let hive = self.clone();
        let n = name.clone();
        within_budget("spawn", vec![name.to_string()], async move {
            hive.spawn_now(&n).await
        })
        .await?
    }

    /// Create and start a sub-agent of the manager in the build queue,
    /// however long it takes. A container that cannot be created leaves no
    /// registry row behind, so the spawn can simply be tried again.
    pub async fn spawn_now(&self, name: &Ident) -> Result<(), HiveError> {
        self.spawn_queued(name, true).await
    }

    /// [`Hive::spawn_now`] (`queue`: false when the caller holds it, as an
    /// `init_config` agent's first deploy); claimed before it queues.
    pub(super) async fn spawn_queued(&self, name: &Ident, queue: bool) -> Result<(), HiveError> {
        names::check_new_agent(name, &self.config().manager())?;
        let _claim = Claim::take(self, "spawn", name)?;
        let _queue = if queue {
            Some(self.build_queue().await)
        } else {
            None
        };
        let spec = self.built_spec(name).await?;
        let (n, parent, now) = (name.clone(), self.config().manager(), self.now());
        let max = self.config().max_agents;
        // Counted and inserted in one write: racing spawns cannot overfill.
        let registered_before = self
            .transact(move |c| {
                if agents::get(c, &n)?.is_some() {
                    let unfinished = agents::unfinished_of(c, &n)?;
                    return Ok(Some(unfinished == Some(Intent::Spawn)));
                }
                if agents::count(c)? >= max {
                    return Err(HiveError::HiveFull { name: n, max });
                }
                agents::insert(c, &n, Some(&parent), now)?;
                agents::begin(c, &n, Intent::Spawn, now)?;
                Ok(None)
            })
            .await?;
        let made = match registered_before {
            None => false,
            Some(unfinished) => {
                // A spawn cut short (the daemon killed between registering
                // and starting) is finished by the next one; a whole agent
                // is taken.
                let made = self.container_made(name).await?;
                if made && !unfinished {
                    return Err(HiveError::AlreadyManaged(name.clone()));
                }
                tracing::warn!(agent = %name, "{name}: registered but its spawn was never finished (the daemon stopped half way); finishing the spawn");
                made
            }
        };
        if !made {
            self.make_container(name, &spec, registered_before.is_none())
                .await?;
        }
        tracing::info!(agent = %name, "{name}: spawned");
        if !self.repos().has_any(name) {
            self.seed_deployed_zero(name).await;
        }
        self.start_spawned(name).await
    }

    /// Make `name`'s container (state and runtime directories, its socket,
    /// settings and image) for a registered agent. On failure a `fresh`
    /// registration is undone, so the spawn can be retried; an agent
    /// registered before keeps its row (and its state). The manager hears
    /// of a failure as `spawned{ok:false}`.
    pub(super) async fn make_container(
        &self,
        name: &Ident,
        spec: &ContainerSpec,
        fresh: bool,
    ) -> Result<(), HiveError> {
        let created = async {
            // 0700 whatever the umask: the container's root (via its bind
            // mounts) and the daemon are the only users.
            for dir in [&spec.state_dir, &spec.runtime_dir] {
                private_dir(dir).map_err(|e| HiveError::io(dir, e))?;
            }
            // The socket exists before the container starts, so the
            // harness finds it at boot.
            self.open_socket(name)?;
            self.driver()
                .create(name, spec)
                .await
                .map_err(|error| HiveError::Driver {
                    agent: name.clone(),
                    error,
                })
        }
        .await;
        if let Err(err) = created {
            // A new registration is undone, so the spawn can be retried; an
            // agent registered before keeps its row (and its state).
            if fresh {
                self.close_socket(name);
                let n = name.clone();
                self.store().run(move |c| agents::remove(c, &n)).await?;
            }
            self.notify_spawned(name, Some(err.to_string())).await;
            return Err(err);
        }
        self.built(name, spec).await;
        Ok(())
    }

    /// Finish a spawn a restart cut short (its agent registered): make the
    /// container if it is not complete (as [`Hive::spawn_now`] does), else
    /// start it; the manager hears `spawned{ok}` either way.
    pub(crate) async fn finish_spawn(&self, name: &Ident) -> Result<(), HiveError> {
        if self.container_made(name).await? {
            let _claim = Claim::take(self, "spawn", name)?;
            let _queue = self.build_queue().await;
            self.start_spawned(name).await
        } else {
            self.spawn_now(name).await
        }
    }

    /// Whether `name`'s container has everything it needs to start.
    pub(super) async fn container_made(&self, name: &Ident) -> Result<bool, HiveError> {
        self.driver()
            .exists(name)
            .await
            .map_err(|error| HiveError::Driver {
                agent: name.clone(),
                error,
            })
    }

    /// A spawn's last step: start the new container, show its row, tell
    /// the manager how it went.
    pub(super) async fn start_spawned(&self, name: &Ident) -> Result<(), HiveError> {
        let started = self.clone().start_one(name.clone()).await;
        // Started or refused, the spawn is over: the row is what the
        // operator now acts on.
        let n = name.clone();
        self.store().run(move |c| agents::end(c, &n)).await?;
        self.publish(name).await;
        let started = started.map(drop).map_err(|error| HiveError::Driver {
            agent: name.clone(),
            error,
        });
        let note = started.as_ref().err().map(ToString::to_string);
        self.notify_spawned(name, note).await;
        started
    }

    async fn notify_spawned(&self, name: &Ident, failure: Option<String>) {
        let event = HelperEvent::Spawned {
            agent: name.to_string(),
            ok: failure.is_none(),
            note: failure,
            sha: self.deployed_sha_of(name),
        };
        self.mail().to_manager(event).await;
    }

    /// Tear an agent's container down and forget the agent. Its state
    /// directory stays unless `purge`; its pending approvals are cancelled;
    /// its children move to its parent. (That the manager is never
    /// destroyed is the access policy's, `hive::access`.)
    pub async fn destroy(&self, name: &Ident, purge: bool) -> Result<(), HiveError> {
        let managed = match self.require(name).await {
            Ok(_) => true,
            // `destroy` then `destroy --purge`: the image and the state
            // are still there to delete.
            Err(HiveError::UnknownAgent(_)) if purge => false,
            Err(e) => return Err(e),
        };
        self.inner.roster.set_crashed(name, false);
        let hive = self.clone();
        let n = name.clone();
        within_budget("destroy", vec![name.to_string()], async move {
            if managed {
                hive.destroy_now(&n, purge).await
            } else {
                hive.purge_leftovers(&n).await
            }
        })
        .await?
    }

    /// Delete what a destroy without `--purge` kept of an agent no longer
    /// managed: its container image (`h-` names are the hive's), state
    /// directory and mail. Nothing left is an unknown agent (a typo).
    async fn purge_leftovers(&self, name: &Ident) -> Result<(), HiveError> {
        let state = self.config().agent_state_dir(name);
        let had_state = tokio::fs::try_exists(&state).await.unwrap_or(false);
        let had_container = match self.driver().destroy(name, true).await {
            Ok(()) => true,
            Err(DriverError::NoSuchUnit { .. }) => false,
            Err(error) => {
                return Err(HiveError::Driver {
                    agent: name.clone(),
                    error,
                });
            }
        };
        let n = name.to_string();
        let rows = self.store().run(move |c| purge::agent(c, &n)).await?;
        self.messaging().forget(name, true);
        let had_repos = self.repos().has_any(name);
        if !had_state && !had_container && !had_repos && rows == Purged::default() {
            return Err(HiveError::UnknownAgent(name.clone()));
        }
        remove_dir_if_present(&state).await?;
        self.remove_config_repos(name).await?;
        tracing::info!(agent = %name, ?rows, "{name}: purged what its destroy had kept");
        Ok(())
    }

    /// Destroy a managed agent, however long it takes. The intent is
    /// committed first: a daemon killed half way finishes it at start
    /// ([`Hive::reconcile_registry`]).
    pub(super) async fn destroy_now(&self, name: &Ident, purge: bool) -> Result<(), HiveError> {
        let _claim = Claim::take(self, "destroy", name)?;
        self.mark_going_down(name);
        let (n, now) = (name.clone(), self.now());
        self.store()
            .run(move |c| {
                let intent = if purge {
                    Intent::Purge
                } else {
                    Intent::Destroy
                };
                agents::begin(c, &n, intent, now)
            })
            .await?;
        match self.driver().destroy(name, purge).await {
            Ok(()) | Err(DriverError::NoSuchUnit { .. }) => {}
            Err(error) => {
                return Err(HiveError::Driver {
                    agent: name.clone(),
                    error,
                });
            }
        }
        if purge {
            // Before the row and the intent go: a daemon killed from here
            // on finishes the purge at start, never leaves the state.
            remove_dir_if_present(&self.config().agent_state_dir(name)).await?;
            self.remove_config_repos(name).await?;
        }
        let (n, now, manager) = (name.clone(), self.now(), self.config().manager());
        let (cancelled, wakes, purged) = self
            .store()
            .run(move |c| {
                let mut wakes = Wakes::default();
                let cancelled = approvals::cancel_pending_of(
                    c,
                    &n,
                    "the agent was destroyed",
                    now,
                    |tx, row| {
                        wakes.add(record_resolved(tx, row, &manager, now)?);
                        Ok(())
                    },
                )?;
                agents::remove(c, &n)?;
                // Purge: nothing of this agent may reach a later one of
                // the same name (its mail above all).
                let purged = if purge {
                    Some(purge::agent(c, n.as_str())?)
                } else {
                    None
                };
                Ok((cancelled, wakes, purged))
            })
            .await?;
        self.forget_agenda_of(name).await?;
        // Its row goes, and its children's show their new parent.
        self.reload_roster().await?;
        self.close_socket(name);
        self.messaging().forget(name, purge);
        let runtime = self.config().agent_runtime_dir(name);
        remove_dir_if_present(&runtime).await?;
        tracing::info!(agent = %name, purge, cancelled = cancelled.len(), ?purged, "{name}: destroyed{}", if purge { " and purged" } else { "" });
        let (mail, agent) = (self.mail(), name.to_string());
        mail.wake(wakes);
        mail.to_manager(HelperEvent::Destroyed { agent }).await;
        Ok(())
    }
}

impl Hive {
    /// Delete both config repos of `name` (a purge).
    async fn remove_config_repos(&self, name: &Ident) -> Result<(), HiveError> {
        remove_dir_if_present(&self.repos().proposed(name)).await?;
        remove_dir_if_present(&self.repos().applied(name)).await
    }
}

async fn remove_dir_if_present(dir: &std::path::Path) -> Result<(), HiveError> {
    match tokio::fs::remove_dir_all(dir).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(HiveError::io(dir, e)),
    }
}
/// Create `dir` (and parents) and make it `0700`.
fn private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}
