use super::*;
use crate::wire::host::HostResponse;

#[test]
fn the_version_answer_has_its_golden_line_both_ways() {
    let facts = DaemonVersion {
        name: "hive-c0re".into(),
        version: "0.1.0".into(),
        protocol: 1,
        driver: "systemd".into(),
        profile: "nspawn".into(),
        started_at: "2026-12-07T15:00:00Z".into(),
        uptime_secs: 11_100,
    };
    let line = r#"{"version":1,"ok":true,"daemon":{"name":"hive-c0re","version":"0.1.0","protocol":1,"driver":"systemd","profile":"nspawn","started_at":"2026-12-07T15:00:00Z","uptime_secs":11100}}"#;
    let response = HostResponse {
        daemon: Some(facts),
        ..HostResponse::success()
    };
    assert_eq!(response.to_line(), line);
    assert_eq!(
        serde_json::from_str::<HostResponse>(line).unwrap(),
        response
    );
}

#[test]
fn a_driver_this_build_does_not_know_still_reads() {
    let line = r#"{"version":1,"ok":true,"daemon":{"name":"hive-c0re","version":"9.0.0","protocol":1,"driver":"podman","profile":"oci","started_at":"2026-12-07T15:00:00Z","uptime_secs":5}}"#;
    let response: HostResponse = serde_json::from_str(line).unwrap();
    assert_eq!(response.daemon.unwrap().driver, "podman");
}
