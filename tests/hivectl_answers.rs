//! hivectl says what a write verb did where it did less or more than its
//! usual line reads (the answer's `note`), and refuses what would be a
//! silent no, against the real daemon (fake driver).

#![allow(clippy::disallowed_methods)] // test code runs the binaries under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use common::{Daemon, Launch, hivectl};

fn ok(d: &Daemon, args: &[&str]) -> String {
    let (code, out, err) = hivectl(d, args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn a_grant_or_revoke_that_changes_nothing_says_so() {
    let d = Daemon::start(Launch::Standalone);
    ok(&d, &["spawn", "alice"]);
    let grant = ["grant", "alice", "--egress", "pypi.org:443"];
    assert_eq!(ok(&d, &grant), "alice: granted\n");
    assert_eq!(
        ok(&d, &grant),
        "alice: already has egress pypi.org:443; nothing changed\n"
    );
    let revoke = ["revoke", "alice", "--egress", "pypi.org:443"];
    assert_eq!(ok(&d, &revoke), "alice: revoked\n");
    assert_eq!(
        ok(&d, &revoke),
        "alice: had no egress pypi.org:443; nothing changed\n"
    );
    let revoke_cap = ["revoke", "alice", "--capability", "read_host_journal"];
    assert_eq!(
        ok(&d, &revoke_cap),
        "alice: had no capability read_host_journal; nothing changed\n"
    );
}

#[test]
fn a_grant_without_for_says_it_dropped_the_expiry_it_replaced() {
    let d = Daemon::start(Launch::Standalone);
    ok(&d, &["spawn", "alice"]);
    ok(
        &d,
        &["grant", "alice", "--egress", "pypi.org:443", "--for", "1h"],
    );
    let out = ok(&d, &["grant", "alice", "--egress", "pypi.org:443"]);
    assert!(
        out.starts_with(
            "alice: granted egress pypi.org:443, now until revoked (it was to end at 20"
        ),
        "{out}"
    );
}

#[test]
fn a_tool_group_grant_says_the_sessions_see_it_after_a_rebuild() {
    let d = Daemon::start(Launch::Standalone);
    ok(&d, &["spawn", "alice"]);
    let out = ok(&d, &["grant", "alice", "--tool-group", "lifecycle"]);
    assert!(
        out.starts_with("alice: granted tool group lifecycle; allowed at once")
            && out.contains("`hivectl rebuild alice`"),
        "{out}"
    );
}

/// Used to be: granted, then never dialled (or, for a literal, dialled:
/// the cloud metadata service opened to the agent).
#[test]
fn a_grant_of_a_metadata_service_address_is_refused() {
    let d = Daemon::start(Launch::Standalone);
    ok(&d, &["spawn", "alice"]);
    let (code, out, err) = hivectl(&d, &["grant", "alice", "--egress", "169.254.169.254:80"]);
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains("egress 169.254.169.254:80: 169.254.169.254 is a link-local address")
            && err.contains("which no grant opens"),
        "{err}"
    );
    let (_, grants, _) = hivectl(&d, &["grants", "alice"]);
    assert!(!grants.contains("169.254"), "{grants}");
    assert_eq!(
        ok(&d, &["grant", "alice", "--egress", "10.1.2.3:5432"]),
        "alice: granted\n"
    );
}

#[test]
fn send_refuses_an_empty_body_and_tells_of_a_stopped_recipient() {
    let d = Daemon::start(Launch::Standalone);
    ok(&d, &["spawn", "alice"]);
    for body in ["", "  \n"] {
        let (code, _, err) = hivectl(&d, &["send", "alice", body]);
        assert_eq!(code, 1, "{body:?}: {err}");
        assert!(err.contains("body") && err.contains("is empty"), "{err}");
    }
    assert_eq!(ok(&d, &["send", "alice", "hello"]), "sent to alice\n");
    ok(&d, &["stop", "alice"]);
    assert_eq!(
        ok(&d, &["send", "alice", "later"]),
        "sent to alice, which is stopped: the message waits in its inbox until `hivectl start alice`\n"
    );
}
