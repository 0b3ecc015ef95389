use std::path::PathBuf;

use super::*;
use crate::hive::broker::{InboxLimits, InboxLoad};
use crate::testing::id;
use crate::wire::agent::Response;
use crate::wire::codes::exit;
use crate::wire::host::HostResponse;

/// One example of each variant, in declaration order.
fn one_of_each() -> Vec<HiveError> {
    let driver = DriverError::Bus("no".into());
    vec![
        HiveError::UnknownAgent(id("zed")),
        HiveError::AlreadyManaged(id("bob")),
        HiveError::Denied(Denied::Privileged {
            verb: "kill".into(),
        }),
        HiveError::HiveFull {
            name: id("bob"),
            max: 2,
        },
        HiveError::ReservedName(ReservedName {
            name: id("operator"),
            why: "taken",
        }),
        HiveError::InboxFull(InboxFull {
            recipient: "bob".into(),
            sender: "alice".into(),
            load: InboxLoad {
                messages: 1,
                bytes: 1,
            },
            limits: InboxLimits {
                messages: 1,
                bytes: 1,
            },
        }),
        HiveError::Topology(TopologyError::Cycle {
            child: id("a"),
            parent: id("b"),
        }),
        HiveError::UnknownApproval(9),
        HiveError::ApprovalResolved {
            id: 1,
            status: ApprovalStatus::Denied,
        },
        HiveError::ApprovalInProgress(1),
        HiveError::ApprovalFailed {
            id: 1,
            note: "boom".into(),
        },
        HiveError::Driver {
            agent: id("a"),
            error: driver.clone(),
        },
        HiveError::Partial(vec![(id("a"), driver)]),
        HiveError::NotRunning(id("a")),
        HiveError::StillRunning {
            verb: "start",
            agents: vec!["a".into()],
        },
        HiveError::BadFilter(InvalidFilter {
            filter: "unit",
            value: "x".into(),
            rule: "a unit",
        }),
        HiveError::NoContainerJournal(id("a")),
        HiveError::Journal(JournalError::TimedOut {
            program: "journalctl".into(),
            timeout: std::time::Duration::from_secs(1),
        }),
        HiveError::UnknownRecipient(UnknownRecipient::Local("zed".into())),
        HiveError::BodyTooLarge { size: 2, cap: 1 },
        HiveError::BadHook(crate::hive::hooks::HookError::NotUtf8),
        HiveError::BadArgument(crate::hive::arguments::check_wake_from("").unwrap_err()),
        HiveError::AgentSocket {
            agent: id("a"),
            reason: BindError::AlreadyRunning(PathBuf::from("/run/x")),
        },
        HiveError::io("/x", std::io::Error::other("disk")),
        HiveError::Agenda(AgendaError::ZeroInterval),
        HiveError::Internal("bug".into()),
        HiveError::Store(StoreError::Corrupt("x".into())),
        HiveError::EgressAllowed {
            agent: id("a"),
            host: "pypi.org:443".into(),
        },
        HiveError::Repo(crate::repos::RepoError::State("no repo".into())),
        HiveError::ConfigExists(id("kid")),
        HiveError::NoTurn(id("a")),
        HiveError::NotOffered("update_meta_inputs is for the nixos profile".into()),
        HiveError::TooManyPending {
            agent: id("a"),
            cap: 16,
        },
        HiveError::UnknownMessage(7),
        HiveError::Images(DriverError::Setup("/var/lib/hive-images: denied".into())),
    ]
}

/// The variant's place in the declaration; exhaustive, so a new
/// variant fails to compile here until it has an example above.
fn variant(err: &HiveError) -> usize {
    match err {
        HiveError::UnknownAgent(_) => 0,
        HiveError::AlreadyManaged(_) => 1,
        HiveError::Denied(_) => 2,
        HiveError::HiveFull { .. } => 3,
        HiveError::ReservedName(_) => 4,
        HiveError::InboxFull(_) => 5,
        HiveError::Topology(_) => 6,
        HiveError::UnknownApproval(_) => 7,
        HiveError::ApprovalResolved { .. } => 8,
        HiveError::ApprovalInProgress(_) => 9,
        HiveError::ApprovalFailed { .. } => 10,
        HiveError::Driver { .. } => 11,
        HiveError::Partial(_) => 12,
        HiveError::NotRunning(_) => 13,
        HiveError::StillRunning { .. } => 14,
        HiveError::BadFilter(_) => 15,
        HiveError::NoContainerJournal(_) => 16,
        HiveError::Journal(_) => 17,
        HiveError::UnknownRecipient(_) => 18,
        HiveError::BodyTooLarge { .. } => 19,
        HiveError::BadHook(_) => 20,
        HiveError::BadArgument(_) => 21,
        HiveError::AgentSocket { .. } => 22,
        HiveError::Io { .. } => 23,
        HiveError::Agenda(_) => 24,
        HiveError::Internal(_) => 25,
        HiveError::Store(_) => 26,
        HiveError::EgressAllowed { .. } => 27,
        HiveError::Repo(_) => 28,
        HiveError::ConfigExists(_) => 29,
        HiveError::NoTurn(_) => 30,
        HiveError::NotOffered(_) => 31,
        HiveError::TooManyPending { .. } => 32,
        HiveError::UnknownMessage(_) => 33,
        HiveError::Images(_) => 34,
    }
}

#[test]
fn every_variant_has_a_code_every_door_carries_with_its_status_and_exit() {
    let all = one_of_each();
    let seen: Vec<usize> = all.iter().map(variant).collect();
    assert_eq!(seen, (0..35).collect::<Vec<_>>(), "one example per variant");
    for err in &all {
        let code = err.code();
        assert_ne!(code, ErrorCode::Unknown, "{err}");
        // host.sock and the agent sockets carry the code beside the words.
        let host = HostResponse::error(code, err.to_string()).to_line();
        let back: HostResponse = serde_json::from_str(&host).unwrap();
        assert_eq!(back.code, Some(code), "{host}");
        let agent = serde_json::to_string(&Response::err(code, err.to_string())).unwrap();
        assert!(
            agent.ends_with(&format!(r#","code":"{code}"}}"#)),
            "{agent}"
        );
        // Whoever reacts differently gets a different code.
        let expected_exit = match err {
            HiveError::StillRunning { .. } => exit::IN_PROGRESS,
            HiveError::InboxFull(_)
            | HiveError::ApprovalInProgress(_)
            | HiveError::TooManyPending { .. } => exit::RETRY_LATER,
            HiveError::AgentSocket { .. }
            | HiveError::Io { .. }
            | HiveError::Internal(_)
            | HiveError::Store(_) => exit::HIVE_FAILED,
            _ => exit::REFUSED,
        };
        assert_eq!(code.exit_status(), expected_exit, "{err}");
    }
    let status = |i: usize| all[i].code().http_status();
    assert_eq!(
        [status(0), status(2), status(5), status(14), status(26)],
        [404, 403, 429, 202, 500]
    );
}

#[test]
fn codes_that_need_different_reactions_differ() {
    let all = one_of_each();
    let code = |i: usize| all[i].code();
    // Retry later (a full inbox) is not fix the name (nobody by it).
    assert_ne!(code(5), code(18));
    // Still going on is not failed.
    assert_ne!(code(14), code(11));
    // The agenda's refusals by what the caller changes.
    let agenda = [
        (AgendaError::UnknownReminder(1), ErrorCode::UnknownItem),
        (AgendaError::ScheduleEnded(1), ErrorCode::ItemClosed),
        (
            AgendaError::NotTheOwner {
                kind: "reminder",
                id: 1,
            },
            ErrorCode::Denied,
        ),
        (
            AgendaError::TooMany {
                who: "a".into(),
                what: "reminders",
                max: 1,
            },
            ErrorCode::LimitReached,
        ),
        (AgendaError::NoTargets, ErrorCode::InvalidItem),
    ];
    for (err, expected) in agenda {
        assert_eq!(HiveError::Agenda(err).code(), expected);
    }
    // Every code is sent for some error, but the ones only a socket's
    // framing gives (the sockets' own tests show those).
    let framing = [
        ErrorCode::BadRequest,
        ErrorCode::TooManyConnections,
        ErrorCode::IdleClosed,
    ];
    let agenda_codes = [
        ErrorCode::UnknownItem,
        ErrorCode::ItemClosed,
        ErrorCode::LimitReached,
    ];
    // A driver error with a reaction of its own (tested below).
    let driver_codes = [ErrorCode::NoDiskQuota];
    for c in ErrorCode::ALL {
        if !framing.contains(&c) && !agenda_codes.contains(&c) && !driver_codes.contains(&c) {
            assert!(all.iter().any(|e| e.code() == c), "{c} is never sent");
        }
    }
}

#[test]
fn a_start_refused_for_want_of_a_disk_quota_has_its_own_code_not_driver_failed() {
    let err = HiveError::Driver {
        agent: id("alice"),
        error: DriverError::NoDiskQuota {
            dir: PathBuf::from("/var/lib/hyperhive/agents/alice"),
            why: "tmpfs has no project quota".into(),
        },
    };
    let code = err.code();
    assert_eq!(code, ErrorCode::NoDiskQuota);
    assert_eq!(code.as_str(), "no_disk_quota");
    assert_eq!(
        (code.http_status(), code.exit_status()),
        (503, exit::REFUSED)
    );
    let text = err.to_string();
    assert!(
        text.contains("/var/lib/hyperhive/agents/alice")
            && text.contains("tmpfs has no project quota")
            && text.contains("agent_disk_quota_required"),
        "{text}"
    );
}
