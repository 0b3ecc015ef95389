//! The per-agent buckets with time as a parameter: an [`Instant`] moved by
//! hand. Before issue 44 the service wrote one line per connection for
//! every agent alike, and one agent's ~38,000 lines in 30 s pushed other
//! agents' lines past journald's limit.

use std::time::Duration;

use super::*;
use crate::testing::id;

fn after(t0: Instant, ms: u64) -> Instant {
    t0 + Duration::from_millis(ms)
}

#[test]
fn an_agent_opens_its_burst_at_once_then_sixteen_a_second() {
    let (mut agents, t0, alice) = (Agents::default(), Instant::now(), id("alice"));
    for n in 0..64 {
        assert!(agents.admit(&alice, t0), "connection {n}");
    }
    assert!(!agents.admit(&alice, t0), "the 65th at once");
    // 1/16 s later there is one more, not two.
    assert!(agents.admit(&alice, after(t0, 63)));
    assert!(!agents.admit(&alice, after(t0, 64)));
    assert!(agents.admit(&alice, after(t0, 126)));
    // A second of silence gives sixteen.
    let t2 = after(t0, 1130);
    assert_eq!((0..20).filter(|_| agents.admit(&alice, t2)).count(), 16);
}

#[test]
fn one_agents_connection_flood_leaves_another_agents_budget_whole() {
    let (mut agents, t0) = (Agents::default(), Instant::now());
    let refused = (0..2000)
        .filter(|&i| !agents.admit(&id("mallory"), after(t0, i / 10)))
        .count();
    assert!(refused > 1900, "{refused} of 2000 refused");
    assert_eq!((0..64).filter(|_| agents.admit(&id("bob"), t0)).count(), 64);
}

#[test]
fn lines_past_the_budget_are_counted_and_summarised_per_target_when_it_returns() {
    let (mut agents, t0, m) = (Agents::default(), Instant::now(), id("mallory"));
    let evil = Line::Refused("evil.test:443".into());
    for n in 0..100 {
        assert_eq!(
            agents.log(&m, &evil, t0),
            Verdict {
                summary: None,
                write: true
            },
            "line {n}"
        );
    }
    for _ in 0..30 {
        assert!(!agents.log(&m, &evil, t0).write);
    }
    for _ in 0..5 {
        assert!(!agents.log(&m, &Line::Allowed, t0).write);
    }
    assert!(
        !agents
            .log(&m, &Line::Refused("other.test:80".into()), t0)
            .write
    );
    assert!(!agents.log(&m, &Line::Limited, t0).write);
    // Two tokens later: the summary first, then the line.
    let verdict = agents.log(&m, &Line::Allowed, after(t0, 200));
    assert!(verdict.write);
    let summary = verdict.summary.unwrap();
    assert_eq!(summary.total(), 37);
    assert_eq!(
        summary.to_string(),
        "37 egress log lines suppressed (30 refused to evil.test:443, \
         1 refused to other.test:80, 5 allowed, 1 over the connection rate (429))"
    );
    // Nothing left to summarise.
    assert_eq!(agents.log(&m, &Line::Allowed, after(t0, 400)).summary, None);
}

#[test]
fn one_agents_log_flood_leaves_another_agents_lines_written() {
    let (mut agents, t0) = (Agents::default(), Instant::now());
    for i in 0..38_000 {
        agents.log(&id("mallory"), &Line::Failed, after(t0, i / 1000));
    }
    let bob = agents.log(
        &id("bob"),
        &Line::Refused("x.test:443".into()),
        after(t0, 38),
    );
    assert_eq!(
        bob,
        Verdict {
            summary: None,
            write: true
        }
    );
}

#[test]
fn when_the_summary_takes_the_last_token_the_line_waits_for_the_next_summary() {
    let (mut agents, t0, m) = (Agents::default(), Instant::now(), id("mallory"));
    for _ in 0..101 {
        agents.log(&m, &Line::Allowed, t0);
    }
    // 0.15 s: one token and a half; the summary of the one suppressed
    // line takes the one.
    let verdict = agents.log(&m, &Line::Failed, after(t0, 150));
    assert_eq!(verdict.summary.map(|s| s.total()), Some(1));
    assert!(!verdict.write);
    let next = agents.log(&m, &Line::Allowed, after(t0, 300));
    assert_eq!(
        next.summary.map(|s| s.to_string()).as_deref(),
        Some("1 egress log lines suppressed (1 failed)")
    );
    assert!(next.write);
}

#[test]
fn refusals_past_sixteen_targets_are_counted_together() {
    let (mut agents, t0, m) = (Agents::default(), Instant::now(), id("mallory"));
    for _ in 0..100 {
        agents.log(&m, &Line::Allowed, t0);
    }
    for n in 0..40 {
        agents.log(&m, &Line::Refused(format!("h{n:02}.test:443")), t0);
    }
    let summary = agents
        .log(&m, &Line::Allowed, after(t0, 500))
        .summary
        .unwrap();
    assert_eq!(summary.refused.len(), SUMMARY_TARGETS);
    assert_eq!(summary.refused_elsewhere, 24);
    assert!(
        summary
            .to_string()
            .ends_with(", 24 refused to other targets)"),
        "{summary}"
    );
}

#[test]
fn a_sweep_writes_the_summary_of_a_flood_that_stopped_and_drops_idle_agents() {
    let (mut agents, t0) = (Agents::default(), Instant::now());
    for _ in 0..150 {
        agents.log(&id("mallory"), &Line::Limited, t0);
    }
    agents.log(&id("bob"), &Line::Allowed, t0);
    assert_eq!(agents.len(), 2);
    // At once: no token for mallory's summary yet.
    assert_eq!(agents.sweep(t0), []);
    let due = agents.sweep(after(t0, 1000));
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].0, id("mallory"));
    assert_eq!(
        due[0].1.to_string(),
        "50 egress log lines suppressed (50 over the connection rate (429))"
    );
    assert_eq!(agents.len(), 1, "bob's buckets are full again: dropped");
    // Ten seconds on mallory's are full too: an entry equal to a new one
    // is dropped, losing nothing.
    assert_eq!(agents.sweep(after(t0, 11_000)), []);
    assert!(agents.is_empty());
}

#[test]
fn an_earlier_instant_from_a_racing_task_refills_nothing() {
    let (mut agents, t0, a) = (Agents::default(), Instant::now(), id("alice"));
    let t1 = after(t0, 5000);
    for _ in 0..64 {
        assert!(agents.admit(&a, t1));
    }
    assert!(!agents.admit(&a, t0));
    assert!(!agents.admit(&a, t1));
}
