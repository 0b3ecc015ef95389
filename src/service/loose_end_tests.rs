//! Loose ends, grants, cancelling and caps, on the same world as
//! `agenda_tests` (a hive on a real SQLite file and a manual clock).

use super::HiveError;
use super::agenda_tests::*;
use crate::hive::access::{Denied, Who};
use crate::hive::agenda::{AgendaError, Caller};
use crate::service::grants::Grant;
use crate::wire::agenda::{CancelLooseEndKind, Capability, LooseEnd, ReminderTiming, ToolGroup};

#[tokio::test]
async fn loose_ends_are_scoped_to_self_and_children_unless_query_agent_state_is_granted() {
    let w = World::new().await;
    for owner in ["alice", "kid", "bob"] {
        w.hive
            .remind(
                &id(owner),
                format!("{owner}'s"),
                ReminderTiming::InSeconds { seconds: 60 },
                None,
            )
            .await
            .unwrap();
    }
    let alice = Caller::Agent(id("alice"));
    let mine = w.hive.loose_ends(&alice, None).await.unwrap();
    assert!(
        matches!(&mine[..], [LooseEnd::Reminder { owner, .. }] if owner == "alice"),
        "{mine:?}"
    );
    let child = w.hive.loose_ends(&alice, Some("kid")).await.unwrap();
    assert!(matches!(&child[..], [LooseEnd::Reminder { owner, .. }] if owner == "kid"));
    let refused = w.hive.loose_ends(&alice, Some("bob")).await.unwrap_err();
    assert!(matches!(
        refused,
        HiveError::Denied(Denied::NeedsCapability {
            capability: Capability::QueryAgentState,
            ..
        })
    ));
    let count = w.hive.count_pending_reminders(&alice, Some("bob")).await;
    assert!(count.is_err());
    let star = w.hive.loose_ends(&alice, Some("*")).await.unwrap_err();
    assert!(matches!(star, HiveError::Denied(Denied::HiveWideRefused)));
    // A child does not see its parent.
    let up = w
        .hive
        .loose_ends(&Caller::Agent(id("kid")), Some("alice"))
        .await;
    assert!(up.is_err());

    w.hive
        .set_grant(
            &id("alice"),
            Grant::Capability(Capability::QueryAgentState),
            true,
        )
        .await
        .unwrap();
    let bobs = w.hive.loose_ends(&alice, Some("bob")).await.unwrap();
    assert!(matches!(&bobs[..], [LooseEnd::Reminder { owner, .. }] if owner == "bob"));
    assert_eq!(
        w.hive
            .count_pending_reminders(&alice, Some("bob"))
            .await
            .unwrap(),
        1
    );
    // Even with the grant, "*" stays a manager-socket view.
    assert!(w.hive.loose_ends(&alice, Some("*")).await.is_err());

    // The manager sees the whole hive, and itself by default.
    let all = w
        .hive
        .loose_ends(&Caller::Manager(id("ruth")), Some("*"))
        .await
        .unwrap();
    assert_eq!(all.len(), 3);
    assert!(
        w.hive
            .loose_ends(&Caller::Manager(id("ruth")), None)
            .await
            .unwrap()
            .is_empty()
    );
    let stats = w
        .hive
        .reminder_rollup(&Caller::Manager(id("ruth")), 0, Some("*"))
        .await
        .unwrap();
    assert_eq!((stats.scheduled, stats.pending), (3, 3));
    let unknown = w
        .hive
        .loose_ends(&Caller::Manager(id("ruth")), Some("ghost"))
        .await;
    assert!(matches!(unknown.unwrap_err(), HiveError::UnknownAgent(_)));
}

#[tokio::test]
async fn capability_checks_refuse_and_then_allow_after_a_grant() {
    let w = World::new().await;
    let bob = id("bob");
    let check = || w.hive.authorize(Who::Agent(&bob), "get_host_journal", None);
    assert!(matches!(
        check().await.unwrap_err(),
        HiveError::Denied(Denied::MissingCapability { .. })
    ));
    w.hive
        .set_grant(
            &id("bob"),
            Grant::Capability(Capability::ReadHostJournal),
            true,
        )
        .await
        .unwrap();
    check().await.unwrap();
    w.hive
        .set_grant(
            &id("bob"),
            Grant::Capability(Capability::ReadHostJournal),
            false,
        )
        .await
        .unwrap();
    assert!(check().await.is_err());

    let lifecycle = || w.hive.authorize(Who::Agent(&bob), "list_descendants", None);
    assert!(lifecycle().await.is_err());
    w.hive
        .set_grant(&id("bob"), Grant::ToolGroup(ToolGroup::Lifecycle), true)
        .await
        .unwrap();
    lifecycle().await.unwrap();
    // The defaults stay next to the new group, and the container gets both.
    let spec = w.hive.container_spec(&id("bob")).await.unwrap();
    assert_eq!(
        spec.env,
        vec![
            ("HIVE_CAPABILITIES".to_owned(), String::new()),
            (
                "HIVE_TOOL_GROUPS".to_owned(),
                "messaging,meta,inbox,lifecycle,execution".to_owned()
            ),
        ]
    );
    let unknown = w
        .hive
        .set_grant(&id("ghost"), Grant::ToolGroup(ToolGroup::Meta), true)
        .await;
    assert!(matches!(unknown.unwrap_err(), HiveError::UnknownAgent(_)));
}

#[tokio::test]
async fn destroying_an_agent_forgets_its_grants_and_cancels_its_reminders() {
    let w = World::new().await;
    w.hive
        .set_grant(
            &id("bob"),
            Grant::Capability(Capability::QueryAgentState),
            true,
        )
        .await
        .unwrap();
    w.hive
        .remind(
            &id("bob"),
            "later".into(),
            ReminderTiming::InSeconds { seconds: 5 },
            None,
        )
        .await
        .unwrap();
    w.hive.destroy(&id("bob"), false).await.unwrap();
    assert!(w.hive.capabilities(&id("bob")).await.unwrap().is_empty());
    w.clock.advance(10);
    assert_eq!(w.hive.tick().await.unwrap().reminders, 0);
}

#[tokio::test]
async fn owners_cancel_their_loose_ends_and_nobody_else_does() {
    let w = World::new().await;
    let r = w
        .hive
        .remind(
            &id("alice"),
            "m".into(),
            ReminderTiming::InSeconds { seconds: 5 },
            None,
        )
        .await
        .unwrap();
    let q = ask(&w, "alice", None, None).await;
    let bob = Caller::Agent(id("bob"));
    let alice = Caller::Agent(id("alice"));
    for (kind, id_) in [
        (CancelLooseEndKind::Reminder, r),
        (CancelLooseEndKind::Question, q),
    ] {
        let err = w.hive.cancel_loose_end(&bob, kind, id_).await.unwrap_err();
        assert!(matches!(agenda(err), AgendaError::NotTheOwner { .. }));
        w.hive.cancel_loose_end(&alice, kind, id_).await.unwrap();
    }
    w.clock.advance(10);
    w.hive.tick().await.unwrap();
    assert!(w.from("alice", "reminder").await.is_empty());
    assert!(w.hive.open_questions().await.unwrap().is_empty());
    let again = w
        .hive
        .cancel_loose_end(&alice, CancelLooseEndKind::Reminder, r)
        .await;
    assert!(matches!(
        agenda(again.unwrap_err()),
        AgendaError::ReminderClosed { .. }
    ));
    let approval = w
        .hive
        .cancel_loose_end(&alice, CancelLooseEndKind::Approval, 1)
        .await;
    assert!(matches!(
        approval.unwrap_err(),
        HiveError::Denied(Denied::ApprovalNeedsManager)
    ));
}

#[tokio::test]
async fn an_agent_cannot_pile_up_reminders_or_open_questions_past_the_caps() {
    let w = World::new().await;
    w.hive
        .store()
        .run(|c| {
            let tx = crate::store::immediate(c)?;
            for n in 0..crate::hive::agenda::MAX_PENDING_REMINDERS {
                crate::store::reminders::insert(&tx, "alice", "r", T0 + 60, T0 + n as i64)?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
        .unwrap();
    let more = w
        .hive
        .remind(
            &id("alice"),
            "one too many".into(),
            ReminderTiming::InSeconds { seconds: 1 },
            None,
        )
        .await;
    assert!(matches!(
        agenda(more.unwrap_err()),
        AgendaError::TooMany { max: 1000, .. }
    ));
    for _ in 0..crate::hive::agenda::MAX_OPEN_QUESTIONS {
        ask(&w, "bob", None, None).await;
    }
    let more = w
        .hive
        .ask(&id("bob"), "again?".into(), vec![], false, None, None)
        .await;
    assert!(matches!(
        agenda(more.unwrap_err()),
        AgendaError::TooMany { max: 100, .. }
    ));
    // Another agent is not affected.
    ask(&w, "kid", None, None).await;
}
