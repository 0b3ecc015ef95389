use super::*;

#[test]
fn the_settings_run_the_quoted_harness_on_every_subscribed_event() {
    let s = settings(std::path::Path::new("/opt/it's/hive-agent"));
    for event in EVENTS {
        assert_eq!(
            s["hooks"][event][0]["hooks"][0]["command"],
            r"'/opt/it'\''s/hive-agent' hook"
        );
    }
}

#[tokio::test]
async fn an_unreachable_hive_is_a_note_within_the_budget_not_a_wait() {
    let dir = tempfile::tempdir().unwrap();
    let socket = AgentSocket::new(dir.path().join("absent.sock"));
    let started = std::time::Instant::now();
    let note = forward(&socket, &br#"{"hook_event_name":"Stop"}"#[..], false)
        .await
        .unwrap_err();
    assert!(started.elapsed() < BUDGET + Duration::from_millis(100));
    assert!(note.contains("not delivered"), "{note}");
}

#[tokio::test]
async fn a_payload_over_the_cap_or_not_utf8_is_not_forwarded() {
    let socket = AgentSocket::new("/nonexistent/hive.sock");
    let big = vec![b'a'; MAX_HOOK_PAYLOAD + 1];
    let note = forward(&socket, &big[..], false).await.unwrap_err();
    assert!(note.contains("over"), "{note}");
    let note = forward(&socket, &b"\xff\xfe"[..], false).await.unwrap_err();
    assert!(note.contains("not UTF-8"), "{note}");
}

#[test]
fn the_images_managed_settings_run_the_same_hooks_as_the_harnesss_settings() {
    // systemd/image/install-agent puts this file at
    // /etc/claude-code/managed-settings.json, so a Claude started by hand
    // in the container sends the same hooks (unmarked: its transcript is
    // counted) as a harness turn's Claude (marked headless by its env).
    let shipped: serde_json::Value =
        serde_json::from_str(include_str!("../../systemd/image/managed-settings.json")).unwrap();
    assert_eq!(
        shipped,
        settings(std::path::Path::new("/usr/local/bin/hive-agent"))
    );
}
