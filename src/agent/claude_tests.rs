use super::*;
use crate::wire::agenda::ToolGroup;

fn launch(command: Option<Vec<String>>) -> Launch {
    let config = RunConfig {
        claude_command: command,
        model: Some("opus".into()),
        state_dir: "/var/lib/hive".into(),
        ..RunConfig::default()
    };
    Launch {
        config,
        selection: Selection::from_values(Some("messaging,execution"), None, &[]).unwrap(),
        harness: "/usr/bin/hive-agent".into(),
        socket: "/run/hive/mcp.sock".into(),
        egress_port: Some(4123),
        agent_env: Vec::new(),
    }
}

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

#[test]
fn the_default_command_runs_claude_headless_with_the_agents_tools_and_session() {
    let argv = launch(None).argv(Some("abc-1"));
    assert_eq!(
        argv,
        [
            "claude",
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--mcp-config",
            "/var/lib/hive/mcp.json",
            "--strict-mcp-config",
            "--settings",
            "/var/lib/hive/hook-settings.json",
            "--allowedTools",
            "mcp__hyperhive__send,mcp__hyperhive__recv,mcp__hyperhive__ask,mcp__hyperhive__answer,mcp__bash__run,mcp__bash__status",
            "--model",
            "opus",
            "--resume",
            "abc-1",
        ]
    );
}

#[test]
fn a_configured_command_is_used_as_given() {
    let l = launch(Some(vec!["/bin/stand-in".into(), "-x".into()]));
    assert_eq!(l.argv(Some("s")), ["/bin/stand-in", "-x"]);
}

#[test]
fn the_mcp_config_names_this_binary_for_both_servers_with_the_grants() {
    let doc = launch(None).mcp_config();
    let hh = &doc["mcpServers"]["hyperhive"];
    assert_eq!(hh["command"], "/usr/bin/hive-agent");
    assert_eq!(hh["args"], json!(["mcp", "--socket", "/run/hive/mcp.sock"]));
    assert_eq!(hh["env"]["HIVE_TOOL_GROUPS"], "messaging,execution");
    assert_eq!(doc["mcpServers"]["bash"]["args"][0], "mcp-bash");
    let mut no_exec = launch(None);
    no_exec.selection.groups = vec![ToolGroup::Messaging];
    assert!(no_exec.mcp_config()["mcpServers"].get("bash").is_none());
}

#[test]
fn the_stream_tells_the_model_the_session_and_a_reported_error() {
    let mut f = StreamFacts::default();
    f.observe(
        r#"{"type":"system","subtype":"init","model":"claude-sonnet-4-5","session_id":"s-1"}"#,
    );
    f.observe("not json at all");
    f.observe(r#"{"type":"assistant","message":{"model":"claude-opus-4-1","content":[]}}"#);
    assert_eq!(f.model.as_deref(), Some("claude-opus-4-1"));
    assert_eq!(f.session_id.as_deref(), Some("s-1"));
    assert_eq!(f.error, None);
    f.observe(r#"{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s-1"}"#);
    assert_eq!(f.error.as_deref(), Some("error_during_execution"));
    // A model name with control characters is not reported.
    let mut g = StreamFacts::default();
    g.observe(r#"{"type":"system","model":"a\nb"}"#);
    assert_eq!(g.model, None);
}

async fn turn(argv: Vec<String>, deadline: u64) -> TurnEnd {
    let (_tx, rx) = watch::channel(false);
    let dir = tempfile::tempdir().unwrap();
    run_turn(
        &argv,
        &[],
        dir.path(),
        "the prompt",
        Ends {
            deadline: Duration::from_secs(deadline),
            stop: rx,
            grace: Duration::from_secs(1),
            interrupted: std::future::pending(),
        },
    )
    .await
}

#[tokio::test]
async fn a_command_that_reads_the_prompt_and_exits_zero_is_done() {
    let end = turn(
        sh(r#"read p; test "$p" = "the prompt" && echo '{"type":"system","model":"m1"}'"#),
        10,
    )
    .await;
    assert_eq!(
        end,
        TurnEnd::Done(StreamFacts {
            model: Some("m1".into()),
            ..StreamFacts::default()
        })
    );
}

#[tokio::test]
async fn a_failing_command_or_a_reported_error_is_a_failed_turn() {
    let TurnEnd::Failed { why, .. } = turn(sh("exit 3"), 10).await else {
        panic!()
    };
    assert!(why.contains("exit status: 3"), "{why}");
    let TurnEnd::Failed { why, .. } = turn(
        sh(r#"echo '{"type":"result","is_error":true,"result":"401 unauthorized"}'"#),
        10,
    )
    .await
    else {
        panic!()
    };
    assert!(why.contains("401"), "{why}");
    let TurnEnd::Failed { why, .. } = turn(vec!["/nonexistent/claude".into()], 10).await else {
        panic!()
    };
    assert!(why.contains("cannot start"), "{why}");
}

#[tokio::test]
async fn a_turn_past_its_deadline_is_killed_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("child-alive");
    // The child of the command must go too: it would otherwise touch the
    // marker after 3 s.
    let script = format!("(sleep 3; touch {}) & sleep 60", marker.display());
    let started = std::time::Instant::now();
    let end = turn(sh(&script), 1).await;
    assert!(matches!(end, TurnEnd::Killed { .. }), "{end:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(!marker.exists(), "a child of the turn survived the kill");
}

#[tokio::test]
async fn a_stop_lets_the_turn_finish_within_the_grace_then_kills_it() {
    let dir = tempfile::tempdir().unwrap();
    let (tx, rx) = watch::channel(false);
    let quick = tokio::spawn({
        let rx = rx.clone();
        let path = dir.path().to_owned();
        async move {
            run_turn(
                &sh("sleep 0.5"),
                &[],
                &path,
                "",
                Ends {
                    deadline: Duration::from_secs(30),
                    stop: rx,
                    grace: Duration::from_secs(5),
                    interrupted: std::future::pending(),
                },
            )
            .await
        }
    });
    let slow = tokio::spawn({
        let path = dir.path().to_owned();
        async move {
            run_turn(
                &sh("sleep 60"),
                &[],
                &path,
                "",
                Ends {
                    deadline: Duration::from_secs(30),
                    stop: rx,
                    grace: Duration::from_secs(1),
                    interrupted: std::future::pending(),
                },
            )
            .await
        }
    });
    tx.send(true).unwrap();
    assert!(matches!(quick.await.unwrap(), TurnEnd::Done(_)));
    let TurnEnd::Killed { why, .. } = slow.await.unwrap() else {
        panic!()
    };
    assert!(why.contains("stopping"), "{why}");
}

/// `script` run as a turn's command in `env` ends as a finished turn (its
/// `test`s held).
async fn assert_turn_done(
    script: &str,
    env: &[(String, String)],
    dir: &Path,
    stop: watch::Receiver<bool>,
) {
    let end = run_turn(
        &sh(script),
        env,
        dir,
        "p",
        Ends {
            deadline: Duration::from_secs(10),
            stop,
            grace: Duration::from_secs(1),
            interrupted: std::future::pending(),
        },
    )
    .await;
    assert!(matches!(end, TurnEnd::Done(_)), "{end:?}");
}

#[tokio::test]
async fn a_turns_command_and_its_children_get_the_egress_forwarder_as_their_proxy() {
    let (_tx, rx) = watch::channel(false);
    let dir = tempfile::tempdir().unwrap();
    let env = launch(None).env();
    let script = r#"test "$HTTPS_PROXY" = http://127.0.0.1:4123 \
        && sh -c 'test "$https_proxy" = http://127.0.0.1:4123 && test "$NO_PROXY" = localhost,127.0.0.1,::1' \
        && echo '{"type":"system","model":"m1"}'"#;
    assert_turn_done(script, &env, dir.path(), rx).await;
}

#[tokio::test]
async fn an_interrupt_ends_the_turn_and_its_process_group_at_once() {
    let (_tx, rx) = watch::channel(false);
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("child-still-ran");
    // A child in the background that would leave a marker after the turn.
    let script = format!(
        "echo '{{\"type\":\"system\",\"model\":\"m1\",\"session_id\":\"s-9\"}}'; \
         (sleep 2; touch {}) & sleep 60",
        marker.display()
    );
    let started = std::time::Instant::now();
    let end = run_turn(
        &sh(&script),
        &[],
        dir.path(),
        "",
        Ends {
            deadline: Duration::from_secs(30),
            stop: rx,
            grace: Duration::from_secs(30),
            interrupted: tokio::time::sleep(Duration::from_millis(300)),
        },
    )
    .await;
    let TurnEnd::Interrupted { facts } = end else {
        panic!("{end:?}")
    };
    assert_eq!(
        facts.session_id.as_deref(),
        Some("s-9"),
        "what it said is kept"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert!(!marker.exists(), "the turn's children were stopped too");
}

#[test]
fn a_harness_turns_claude_marks_its_hooks_headless_so_its_transcript_is_not_counted_twice() {
    let env = launch(None).env();
    assert!(
        env.iter()
            .any(|(k, v)| k == super::super::hook::ENV_HEADLESS_TURN && v == "1"),
        "{env:?}"
    );
}

#[tokio::test]
async fn a_turns_command_gets_the_agents_variables_but_not_in_place_of_the_hives() {
    let (_tx, rx) = watch::channel(false);
    let dir = tempfile::tempdir().unwrap();
    let mut launch = launch(None);
    launch.agent_env = vec![
        ("ANTHROPIC_BASE_URL".into(), "http://127.0.0.2:9 x".into()),
        ("ANTHROPIC_API_KEY".into(), "sk-agent".into()),
        ("HTTPS_PROXY".into(), "http://elsewhere:1".into()),
    ];
    assert_eq!(launch.var("ANTHROPIC_API_KEY").as_deref(), Some("sk-agent"));
    let script = r#"test "$ANTHROPIC_BASE_URL" = "http://127.0.0.2:9 x" \
        && test "$ANTHROPIC_API_KEY" = sk-agent \
        && test "$HTTPS_PROXY" = http://127.0.0.1:4123 \
        && echo '{"type":"system","model":"m1"}'"#;
    assert_turn_done(script, &launch.env(), dir.path(), rx).await;
}

#[tokio::test]
async fn claude_saying_it_has_no_conversation_on_stderr_or_in_its_result_is_noticed() {
    // What Claude Code 2.x prints for `--resume` of an unknown session:
    // the sentence on stderr, and in its `result` event's `errors`.
    let TurnEnd::Failed { facts, how, .. } = turn(
        sh("echo 'No conversation found with session ID: s-9' >&2; exit 1"),
        10,
    )
    .await
    else {
        panic!()
    };
    assert!(facts.no_conversation);
    assert_eq!(how, Failure::Exited("exit status: 1".into()));
    let result = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"new-1","errors":["No conversation found with session ID: s-9"]}"#;
    let TurnEnd::Failed { facts, why, .. } =
        turn(sh(&format!("echo '{result}'; exit 1")), 10).await
    else {
        panic!()
    };
    assert!(facts.no_conversation);
    assert!(why.contains("No conversation found"), "{why}");
    let TurnEnd::Failed { facts, .. } = turn(sh("echo 'some other error' >&2; exit 1"), 10).await
    else {
        panic!()
    };
    assert!(!facts.no_conversation);
}

#[tokio::test]
async fn a_command_that_cannot_start_did_not_run_and_a_deadline_says_so() {
    let TurnEnd::Failed { how, .. } = turn(vec!["/nonexistent/claude".into()], 10).await else {
        panic!()
    };
    assert_eq!(how, Failure::NotStarted);
    let TurnEnd::Killed { by, .. } = turn(sh("sleep 30"), 1).await else {
        panic!()
    };
    assert_eq!(by, Stop::Deadline);
}

#[test]
fn a_turn_without_its_own_api_settings_talks_to_the_model_gateway_with_a_sentinel() {
    let mut launch = launch(None);
    let dir = tempfile::tempdir().unwrap();
    launch.config.state_dir = dir.path().to_owned();
    let env = launch.env();
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(
        get("ANTHROPIC_BASE_URL").as_deref(),
        Some("http://127.0.0.1:4123")
    );
    assert!(
        get("ANTHROPIC_AUTH_TOKEN").is_some_and(|t| t.starts_with("hive-sentinel-")),
        "{env:?}"
    );
    // A login of its own (here a key in agent.json): no sentinel over it.
    launch.agent_env = vec![("ANTHROPIC_API_KEY".into(), "sk-agent".into())];
    let env = launch.env();
    assert!(
        !env.iter().any(|(k, _)| k == "ANTHROPIC_AUTH_TOKEN"),
        "{env:?}"
    );
    // No forwarder (no egress port): neither.
    launch.egress_port = None;
    launch.agent_env.clear();
    let env = launch.env();
    assert!(
        !env.iter().any(|(k, _)| k.starts_with("ANTHROPIC_")),
        "{env:?}"
    );
}
