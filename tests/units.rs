//! The shipped systemd units agree with the code's defaults, and explain
//! themselves.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

use std::path::Path;

use hive_c0re::config::{
    ADMIN_GROUP, DEFAULT_RUNTIME_DIR, EGRESS_DIALER_SOCKET_NAME, HOST_SOCKET_NAME,
    INSTALLED_BINARY, WEB_SOCKET_NAME,
};
use hive_c0re::systemd::activation::{HOST_FD_NAME, WEB_FD_NAME};

fn unit(name: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("systemd")
            .join(name),
    )
    .unwrap()
}

/// The values of `key=` in a unit, in order.
fn values(text: &str, key: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.strip_prefix(&format!("{key}=")))
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_socket_unit_listens_where_the_code_and_hivectl_look() {
    let socket = unit("hive-c0re.socket");
    assert_eq!(
        values(&socket, "ListenStream"),
        vec![format!("{DEFAULT_RUNTIME_DIR}/{HOST_SOCKET_NAME}")]
    );
    assert_eq!(values(&socket, "FileDescriptorName"), vec![HOST_FD_NAME]);
    assert_eq!(values(&socket, "SocketGroup"), vec![ADMIN_GROUP]);
    assert_eq!(values(&socket, "SocketMode"), vec!["0660"]);
    assert_eq!(values(&socket, "DirectoryMode"), vec!["0751"]);
    assert_eq!(values(&socket, "Service"), vec!["hive-c0re.service"]);
}

#[test]
fn the_service_runs_the_installed_binary_as_a_notify_service() {
    let service = unit("hive-c0re.service");
    assert_eq!(
        values(&service, "ExecStart"),
        vec![format!("{INSTALLED_BINARY} serve")]
    );
    assert_eq!(values(&service, "Type"), vec!["notify"]);
    assert_eq!(values(&service, "RuntimeDirectory"), vec!["hyperhive"]);
    assert_eq!(values(&service, "RuntimeDirectoryPreserve"), vec!["yes"]);
    assert_eq!(values(&service, "Requires"), vec!["hive-c0re.socket"]);
    assert!(DEFAULT_RUNTIME_DIR.ends_with("/hyperhive"));
}

#[test]
fn the_sysusers_file_creates_the_admin_group() {
    assert!(
        unit("hive-c0re.sysusers")
            .lines()
            .any(|l| l == format!("g {ADMIN_GROUP} -"))
    );
}

#[test]
fn every_directive_outside_the_unit_section_has_a_comment_above_it() {
    for name in [
        "hive-c0re.socket",
        "hive-c0re-web.socket",
        "hive-c0re.service",
        "hive-agent.service",
        "hive-c0re-swarm.conf",
        "hive-c0re-egress.socket",
        "hive-c0re-egress.service",
    ] {
        let text = unit(name);
        let mut section = "";
        let mut previous = "";
        for line in text.lines() {
            if line.starts_with('[') {
                section = line;
            } else if section != "[Unit]" && line.contains('=') && !line.starts_with('#') {
                assert!(
                    previous.starts_with('#'),
                    "{name}: {line:?} has no comment above it"
                );
            }
            previous = line;
        }
    }
}

#[test]
fn the_agent_unit_runs_the_harness_as_a_notify_service_with_the_grants_passed_on() {
    use hive_c0re::agent::config::RunConfig;
    use hive_c0re::agent::tools::{ENV_CAPABILITIES, ENV_TOOL_GROUPS};
    use hive_c0re::wire::claude_env::ENV_CLAUDE_ENV;
    let service = unit("hive-agent.service");
    assert_eq!(
        values(&service, "ExecStart"),
        ["/usr/local/bin/hive-agent run"]
    );
    assert_eq!(values(&service, "Type"), ["notify"]);
    assert_eq!(values(&service, "Restart"), ["on-failure"]);
    assert_eq!(
        values(&service, "PassEnvironment"),
        [format!(
            "{ENV_TOOL_GROUPS} {ENV_CAPABILITIES} {ENV_CLAUDE_ENV}"
        )]
    );
    // Claude's home is the state directory the loop keeps its login in.
    let state = RunConfig::default().state_dir;
    assert_eq!(
        values(&service, "Environment"),
        [format!("HOME={}", state.display())]
    );
    // The stop timeout leaves room for the loop's grace.
    let grace = RunConfig::default().stop_grace_seconds;
    let timeout: u64 = values(&service, "TimeoutStopSec")[0]
        .trim_end_matches('s')
        .parse()
        .unwrap();
    assert!(timeout > grace + 10, "{timeout} vs {grace}");
}

#[test]
fn the_dashboard_socket_has_host_socks_audience_and_feeds_the_same_service() {
    let web = unit("hive-c0re-web.socket");
    let host = unit("hive-c0re.socket");
    assert_eq!(
        values(&web, "ListenStream"),
        vec![format!("{DEFAULT_RUNTIME_DIR}/{WEB_SOCKET_NAME}")]
    );
    assert_eq!(values(&web, "FileDescriptorName"), vec![WEB_FD_NAME]);
    for key in [
        "SocketMode",
        "SocketUser",
        "SocketGroup",
        "DirectoryMode",
        "Service",
    ] {
        assert_eq!(values(&web, key), values(&host, key), "{key}");
    }
    let service = unit("hive-c0re.service");
    assert!(values(&service, "Wants").contains(&"hive-c0re-web.socket".to_owned()));
    assert!(values(&service, "After").contains(&"hive-c0re-web.socket".to_owned()));
}

#[test]
fn the_swarm_drop_in_only_opens_the_services_network_for_tcp() {
    let service = unit("hive-c0re.service");
    assert_eq!(values(&service, "RestrictAddressFamilies"), ["AF_UNIX"]);
    let drop_in = unit("hive-c0re-swarm.conf");
    let directives: Vec<&str> = drop_in
        .lines()
        .filter(|l| l.contains('=') && !l.starts_with('#'))
        .collect();
    assert_eq!(
        directives,
        [
            "PrivateNetwork=no",
            "IPAddressDeny=",
            "RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6"
        ]
    );
    assert_eq!(values(&service, "PrivateNetwork"), ["yes"]);
    assert_eq!(values(&service, "IPAddressDeny"), ["any"]);
}

#[test]
fn the_egress_service_listens_where_the_daemon_dials_and_alone_has_a_network() {
    let socket = unit("hive-c0re-egress.socket");
    let dialer = format!("{DEFAULT_RUNTIME_DIR}/{EGRESS_DIALER_SOCKET_NAME}");
    assert_eq!(values(&socket, "ListenStream"), [dialer]);
    assert_eq!(values(&socket, "SocketMode"), ["0600"], "root only");
    assert_eq!(values(&socket, "SocketUser"), ["root"]);
    let egress = unit("hive-c0re-egress.service");
    assert_eq!(
        values(&egress, "ExecStart"),
        [format!("{INSTALLED_BINARY} egress")]
    );
    assert_eq!(values(&egress, "DynamicUser"), ["yes"]);
    assert_eq!(values(&egress, "CapabilityBoundingSet"), [""]);
    assert!(values(&egress, "PrivateNetwork").is_empty());
    // The sentinel the service probes at start is the one the unit denies.
    let sentinel = hive_c0re::egress::service::FILTER_SENTINEL;
    assert_eq!(
        values(&egress, "IPAddressDeny"),
        [format!("link-local multicast {}/32", sentinel.ip())]
    );
    let daemon = unit("hive-c0re.service");
    assert!(values(&daemon, "Wants").contains(&"hive-c0re-egress.socket".to_owned()));
    assert_eq!(
        values(&daemon, "PrivateNetwork"),
        ["yes"],
        "the daemon keeps no network"
    );
}
