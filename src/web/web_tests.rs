//! The templates' promises: user text stays text, unknown row fields show.

use super::views;
use crate::wire::host::{AgentStatusRow, Approval, ApprovalKind, ApprovalStatus, BusError, Review};
use crate::wire::ident::Ident;

/// A running agent's row as the wire carries it (only the required keys).
fn row(name: &str) -> AgentStatusRow {
    let line = format!(
        r#"{{"name":"{name}","running":true,"failed":false,"needs_update":false,
            "needs_login":false,"pending_reminders":0,"paused":false}}"#
    );
    serde_json::from_str(&line).unwrap()
}

#[test]
fn a_status_text_with_markup_is_rendered_as_text() {
    let mut r = row("alice");
    r.status_text = Some("<script>alert(1)</script> & \"x\"".into());
    let html = views::roster_row(&r, 0).into_string();
    assert!(!html.contains("<script>"), "{html}");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"),
        "{html}"
    );
}

#[test]
fn row_flags_without_a_column_show_as_attention_tags() {
    let mut r = row("alice");
    r.needs_login = true;
    let html = views::roster_row(&r, 0).into_string();
    assert!(html.contains("needs login"), "{html}");
    assert!(!html.contains("needs update"), "{html}");
}

#[test]
fn every_form_carries_the_token() {
    let html = views::roster_page(&[row("alice"), row("bob")], "tok123").into_string();
    let forms = html.matches("<form").count();
    let tokens = html.matches(r#"name="csrf" value="tok123""#).count();
    assert_eq!(forms, 2, "the spawn form and the rows' form: {html}");
    assert_eq!(forms, tokens, "{html}");
    // Every row button submits the form that has the token.
    let buttons = html.matches("<button").count();
    let in_rows_form = html.matches(r#"form="row-actions""#).count();
    assert_eq!(buttons, 2 + in_rows_form, "{html}");
    assert!(in_rows_form >= 4, "{html}");
}

#[test]
fn children_follow_their_parent_indented() {
    let mut kid = row("kid");
    kid.parent = Some(Ident::new("boss").unwrap());
    let rows = [kid, row("zed"), row("boss")];
    let order: Vec<_> = views::tree_order(&rows)
        .into_iter()
        .map(|(d, r)| (d, r.name.to_string()))
        .collect();
    assert_eq!(
        order,
        [(0, "zed".into()), (0, "boss".into()), (1, "kid".into())]
    );
}

#[test]
fn an_agent_waiting_on_a_person_gets_a_needs_you_tag_with_its_message() {
    use crate::wire::host::SessionState;
    let mut r = row("alice");
    r.session_state = Some(SessionState::NeedsPermission);
    r.session_message = Some("Claude needs your permission to use <Bash>".into());
    r.session_since = Some("2026-12-01T06:00:00Z".into());
    let html = views::roster_row(&r, 0).into_string();
    assert!(html.contains(r#"class="tag session needs""#), "{html}");
    assert!(
        html.contains("needs you: permission: Claude needs your permission to use &lt;Bash&gt;"),
        "{html}"
    );
    assert!(html.contains("since 2026-12-01T06:00:00Z"), "{html}");
    // The session's keys are not repeated as raw tags.
    assert!(!html.contains("session state"), "{html}");

    r.session_state = Some(SessionState::Working);
    r.session_message = None;
    let html = views::roster_row(&r, 0).into_string();
    assert!(html.contains(r#"class="tag session""#), "{html}");
    assert!(!html.contains("needs"), "{html}");
}

/// A config proposal of alice's as `pending` lists it, fetched.
fn proposal(id: i64, status: ApprovalStatus) -> Approval {
    Approval {
        id,
        agent: Ident::new("alice").unwrap(),
        kind: ApprovalKind::ApplyCommit,
        commit_ref: "0123456".into(),
        fetched_sha: Some("0123456789abcdef0123456789abcdef01234567".into()),
        requested_at: 1_796_040_000,
        status,
        resolved_at: None,
        note: None,
        description: None,
    }
}

#[test]
fn a_pending_proposal_shows_its_diff_under_its_row_as_text() {
    let pending = proposal(7, ApprovalStatus::Pending);
    let review = Review {
        approval: pending.clone(),
        stat: " CLAUDE.md | 1 +\n".into(),
        patch: "+<script>alert(1)</script>\n".into(),
        truncated: true,
        flagged: vec!["symlink link".into()],
    };
    assert!(views::reviewable(&pending));
    let done = proposal(6, ApprovalStatus::Approved);
    assert!(!views::reviewable(&done));
    let html = views::approvals_page(&[pending, done], &[review], "tok").into_string();
    let row = html.find(r#"id="approval-7""#).unwrap();
    let diff = html
        .find(r#"id="review-7""#)
        .expect("the diff has a row of its own");
    assert!(row < diff && diff < html.find(r#"id="approval-6""#).unwrap());
    assert!(!html.contains("id=\"review-6\""), "{html}");
    assert!(html.contains("CLAUDE.md | 1 +"), "{html}");
    assert!(html.contains("symlink link"), "{html}");
    assert!(
        html.contains("+&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script>"), "{html}");
    assert!(html.contains("hivectl show 7"), "{html}");
}

#[test]
fn the_swarm_page_shows_the_buss_last_error_as_text_and_nothing_without_one() {
    let own = Ident::new("hive-a").unwrap();
    let quiet = crate::web::swarm::swarm_page(&[], &own, None).into_string();
    assert!(!quiet.contains("role=\"alert\""), "{quiet}");
    let error = BusError {
        at: 1_796_040_000,
        error: "Permissions Violation for <Publish>".into(),
    };
    let html = crate::web::swarm::swarm_page(&[], &own, Some(&error)).into_string();
    assert!(html.contains("role=\"alert\""), "{html}");
    assert!(
        html.contains("Permissions Violation for &lt;Publish&gt;"),
        "{html}"
    );
}

#[test]
fn a_booting_agent_shows_starting_not_stopped_and_no_transition_tag() {
    let mut r = row("alice");
    r.running = false;
    r.transition = Some(crate::wire::roster::Transition::Starting);
    let html = views::roster_row(&r, 0).into_string();
    assert!(
        html.contains(r#"<span class="state changing">starting</span>"#),
        "{html}"
    );
    assert!(
        !html.contains("stopped") && !html.contains("transition"),
        "{html}"
    );
}
