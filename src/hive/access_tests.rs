use super::*;
use crate::testing::{id, topology};
use crate::wire::agent::Request;
use crate::wire::host::HostRequest;

/// The commands of the door a kind of caller comes through.
fn commands(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Operator => HostRequest::COMMANDS,
        Kind::Agent | Kind::Manager => Request::COMMANDS,
    }
}

#[test]
fn every_verb_of_every_door_has_a_rule_for_every_kind_of_caller_there() {
    for kind in Kind::ALL {
        for verb in commands(kind) {
            assert!(
                rule(kind, verb).is_some(),
                "{verb} has no access rule for {kind:?}: add its row to hive/access.rs"
            );
        }
    }
}

#[test]
fn no_rule_names_a_verb_its_door_does_not_know() {
    for (verb, _) in HOST_VERBS {
        assert!(HostRequest::COMMANDS.contains(verb), "{verb}");
    }
    for row in AGENT_VERBS {
        assert!(Request::COMMANDS.contains(&row.verb), "{}", row.verb);
    }
    let mut verbs: Vec<_> = AGENT_VERBS.iter().map(|r| r.verb).collect();
    verbs.sort_unstable();
    verbs.dedup();
    assert_eq!(verbs.len(), AGENT_VERBS.len(), "a verb listed twice");
}

#[test]
fn a_verb_no_table_lists_is_refused() {
    let me = id("alice");
    for who in [Who::Operator, Who::Agent(&me), Who::Manager(&me)] {
        assert_eq!(
            decide(who, "format_disk", None, Grants::default(), &id("ruth")),
            Err(Denied::NoPolicy {
                verb: "format_disk".into()
            })
        );
    }
}

/// What each kind of caller gets for each verb, without grants, aimed at
/// an ordinary agent: the whole policy as one table.
#[test]
fn each_verb_is_allowed_or_refused_per_kind_of_caller_as_the_table_says() {
    let (alice, ruth, bob) = (id("alice"), id("ruth"), id("bob"));
    let none = Grants::default();
    for kind in Kind::ALL {
        for verb in commands(kind) {
            let who = match kind {
                Kind::Operator => Who::Operator,
                Kind::Agent => Who::Agent(&alice),
                Kind::Manager => Who::Manager(&ruth),
            };
            let got = decide(who, verb, Some(&bob), none, &ruth);
            let expected = match (kind, *verb) {
                (Kind::Operator | Kind::Manager, _) => Ok(()),
                (Kind::Agent, "get_host_journal") => Err(Denied::MissingCapability {
                    caller: "alice".into(),
                    capability: Capability::ReadHostJournal,
                }),
                (Kind::Agent, "list_descendants") => Err(Denied::NeedsToolGroup {
                    caller: "alice".into(),
                    group: ToolGroup::Lifecycle,
                    what: "list_descendants".into(),
                }),
                (
                    Kind::Agent,
                    "request_init_config"
                    | "kill"
                    | "start"
                    | "restart"
                    | "update"
                    | "request_apply_commit"
                    | "request_budget"
                    | "get_logs"
                    | "request_update_meta_inputs"
                    | "request_schedule_prompt"
                    | "cancel_schedule"
                    | "list_schedules"
                    | "fire_schedule_now"
                    | "edit_schedule",
                ) => Err(Denied::Privileged {
                    verb: (*verb).into(),
                }),
                (Kind::Agent, _) => Ok(()),
            };
            assert_eq!(got, expected, "{kind:?} {verb}");
        }
    }
}

#[test]
fn grants_open_the_gated_verbs_to_an_agent() {
    let alice = id("alice");
    let grants = Grants {
        capabilities: &[Capability::ReadHostJournal],
        tool_groups: &[ToolGroup::Lifecycle],
    };
    for verb in ["get_host_journal", "list_descendants"] {
        assert_eq!(
            decide(Who::Agent(&alice), verb, None, grants, &id("ruth")),
            Ok(())
        );
    }
}

#[test]
fn only_the_operator_on_host_sock_may_kill_the_manager_and_nobody_destroys_it() {
    let (alice, ruth) = (id("alice"), id("ruth"));
    let none = Grants::default();
    let on_ruth = |who, verb| decide(who, verb, Some(&ruth), none, &ruth);
    assert_eq!(on_ruth(Who::Operator, "kill"), Ok(()));
    assert_eq!(on_ruth(Who::Operator, "restart"), Ok(()));
    assert_eq!(
        on_ruth(Who::Operator, "destroy"),
        Err(Denied::ManagerProtected {
            name: ruth.clone(),
            verb: "destroyed"
        })
    );
    for (verb, participle) in [
        ("kill", "killed from its own socket"),
        ("start", "started from its own socket"),
        ("restart", "restarted from its own socket"),
        ("update", "rebuilt from its own socket"),
    ] {
        assert_eq!(
            on_ruth(Who::Manager(&ruth), verb),
            Err(Denied::ManagerProtected {
                name: ruth.clone(),
                verb: participle
            })
        );
        assert!(matches!(
            on_ruth(Who::Agent(&alice), verb),
            Err(Denied::Privileged { .. })
        ));
    }
}

#[test]
fn an_agent_may_cancel_its_questions_and_reminders_but_not_an_approval() {
    let alice = Caller::Agent(id("alice"));
    let ruth = Caller::Manager(id("ruth"));
    for kind in [CancelLooseEndKind::Question, CancelLooseEndKind::Reminder] {
        assert_eq!(may_cancel(&alice, kind), Ok(()));
    }
    assert_eq!(
        may_cancel(&alice, CancelLooseEndKind::Approval),
        Err(Denied::ApprovalNeedsManager)
    );
    assert_eq!(may_cancel(&ruth, CancelLooseEndKind::Approval), Ok(()));
}

#[test]
fn refusals_keep_the_texts_clients_know() {
    let privileged = Denied::Privileged {
        verb: "get_logs".into(),
    };
    assert_eq!(
        privileged.to_string(),
        "privileged variant get_logs is refused on an agent socket"
    );
    let protected = Denied::ManagerProtected {
        name: id("ruth"),
        verb: "destroyed",
    };
    assert_eq!(
        protected.to_string(),
        "\"ruth\" is the hive's manager and cannot be destroyed"
    );
}

fn tree() -> Topology {
    topology(&[
        ("ruth", None),
        ("alice", Some("ruth")),
        ("kid", Some("alice")),
        ("bob", Some("ruth")),
    ])
}

fn resolve(caller: Caller, agent: Option<&str>, cap: bool) -> Result<Target, ScopeTarget> {
    resolve_target(&caller, agent, &tree(), cap)
}

#[test]
fn an_agent_sees_itself_and_its_children_and_others_only_with_the_capability() {
    let alice = || Caller::Agent(id("alice"));
    assert_eq!(resolve(alice(), None, false), Ok(Target::One(id("alice"))));
    assert_eq!(
        resolve(alice(), Some("alice"), false),
        Ok(Target::One(id("alice")))
    );
    assert_eq!(
        resolve(alice(), Some("kid"), false),
        Ok(Target::One(id("kid")))
    );
    assert!(matches!(
        resolve(alice(), Some("bob"), false),
        Err(ScopeTarget::Denied(Denied::NeedsCapability { .. }))
    ));
    assert_eq!(
        resolve(alice(), Some("bob"), true),
        Ok(Target::One(id("bob")))
    );
    assert_eq!(
        resolve(alice(), Some("*"), true),
        Err(ScopeTarget::Denied(Denied::HiveWideRefused))
    );
}

#[test]
fn the_manager_sees_itself_any_agent_and_the_whole_hive() {
    assert_eq!(
        resolve(Caller::Manager(id("ruth")), None, false),
        Ok(Target::One(id("ruth")))
    );
    assert_eq!(
        resolve(Caller::Manager(id("ruth")), Some("kid"), false),
        Ok(Target::One(id("kid")))
    );
    assert_eq!(
        resolve(Caller::Manager(id("ruth")), Some("*"), false),
        Ok(Target::Hive)
    );
    assert_eq!(
        resolve(Caller::Manager(id("ruth")), Some("ghost"), false),
        Err(ScopeTarget::Unknown(id("ghost")))
    );
    assert!(matches!(
        resolve(Caller::Manager(id("ruth")), Some("../x"), false),
        Err(ScopeTarget::BadName(_))
    ));
}
