use super::*;
use crate::wire::host::HostResponse;

fn facts(uptime_secs: u64) -> DaemonVersion {
    DaemonVersion {
        name: "hive-c0re".into(),
        version: "0.1.0".into(),
        protocol: 1,
        driver: "systemd".into(),
        profile: "nspawn".into(),
        started_at: "2026-12-07T15:00:00Z".into(),
        uptime_secs,
    }
}

fn reply(line: &str) -> Reply {
    Reply {
        response: serde_json::from_str::<HostResponse>(line).unwrap(),
        line: line.to_owned(),
    }
}

#[test]
fn the_client_line_names_this_builds_release_and_protocol() {
    assert_eq!(
        client_line(),
        format!(
            "client: hivectl {} (protocol {VERSION})\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[test]
fn the_daemon_line_names_its_release_protocol_driver_profile_and_uptime() {
    assert_eq!(
        daemon_line(&facts(3 * 3600 + 5 * 60 + 7)),
        "daemon: hive-c0re 0.1.0 (protocol 1), driver systemd, profile nspawn, up 3h 5m\n"
    );
    assert!(daemon_line(&facts(42)).ends_with(", up 42s\n"));
    assert!(daemon_line(&facts(2 * 86_400 + 4 * 3600)).ends_with(", up 2d 4h\n"));
}

#[test]
fn the_daemon_line_cleans_control_characters_from_the_daemons_words() {
    let mut v = facts(60);
    v.driver = "fake\x1b[2J".into();
    let line = daemon_line(&v);
    assert!(!line.contains('\x1b'), "{line:?}");
    assert!(line.contains("driver fake"), "{line:?}");
}

#[test]
fn a_refusal_of_an_unknown_cmd_reads_as_an_older_daemon() {
    for line in [
        r#"{"version":1,"ok":false,"error":"unknown cmd \"version\"; this hive-c0re knows: list","code":"bad_request"}"#,
        // Before error codes, and before the list of verbs: serde's words.
        r#"{"version":1,"ok":false,"error":"invalid request: unknown variant `version`, expected one of `list`"}"#,
    ] {
        assert!(is_unknown_verb(&reply(line)), "{line}");
    }
}

#[test]
fn other_refusals_and_successes_are_not_an_older_daemon() {
    for line in [
        r#"{"version":1,"ok":false,"error":"request is not valid JSON","code":"bad_request"}"#,
        r#"{"version":1,"ok":false,"error":"unknown cmd, said the store","code":"internal"}"#,
        r#"{"version":1,"ok":true}"#,
    ] {
        assert!(!is_unknown_verb(&reply(line)), "{line}");
    }
}
