use serde_json::{Value, json};

use super::*;

/// Every tool name of every group (the seed's `ToolGroup::tools()`), plus
/// the capability-gated one: the arguments a model sends and the request
/// line that reaches the socket.
fn table() -> Vec<(&'static str, Value, Value)> {
    vec![
        (
            "send",
            json!({"to": "bob", "body": "hi"}),
            json!({"cmd": "send", "to": "bob", "body": "hi"}),
        ),
        (
            "recv",
            json!({"wait_seconds": 999}),
            json!({"cmd": "recv", "wait_seconds": 30, "max": 20}),
        ),
        (
            "ask",
            json!({"question": "ok?", "options": ["y", "n"]}),
            json!({"cmd": "ask", "question": "ok?", "options": ["y", "n"], "multi": false, "ttl_seconds": null, "to": null}),
        ),
        (
            "answer",
            json!({"id": 4, "answer": "yes"}),
            json!({"cmd": "answer", "id": 4, "answer": "yes"}),
        ),
        (
            "set_status",
            json!({"text": "busy"}),
            json!({"cmd": "set_status", "text": "busy"}),
        ),
        (
            "get_agent_meta",
            json!({}),
            json!({"cmd": "get_agent_meta"}),
        ),
        (
            "get_loose_ends",
            json!({"agent": "kid"}),
            json!({"cmd": "get_loose_ends", "agent": "kid"}),
        ),
        (
            "cancel_loose_end",
            json!({"kind": "reminder", "id": 2}),
            json!({"cmd": "cancel_loose_end", "kind": "reminder", "id": 2}),
        ),
        (
            "remind",
            json!({"message": "m", "timing": {"timing_type": "in_seconds", "seconds": 5}}),
            json!({"cmd": "remind", "message": "m", "timing": {"timing_type": "in_seconds", "seconds": 5}, "file_path": null}),
        ),
        (
            "request_next_turn",
            json!({"note": "go on"}),
            json!({"cmd": "wake", "from": "request_next_turn", "body": "go on", "transient": false}),
        ),
        (
            "kill",
            json!({"name": "kid"}),
            json!({"cmd": "kill", "name": "kid"}),
        ),
        (
            "start",
            json!({"name": "kid"}),
            json!({"cmd": "start", "name": "kid"}),
        ),
        (
            "restart",
            json!({"name": "kid"}),
            json!({"cmd": "restart", "name": "kid"}),
        ),
        (
            "update",
            json!({"name": "kid"}),
            json!({"cmd": "update", "name": "kid"}),
        ),
        (
            "list_containers",
            json!({}),
            json!({"cmd": "list_descendants"}),
        ),
        (
            "request_init_config",
            json!({"name": "kid"}),
            json!({"cmd": "request_init_config", "name": "kid"}),
        ),
        (
            "request_apply_commit",
            json!({"agent": "kid", "commit_ref": "0123abc"}),
            json!({"cmd": "request_apply_commit", "agent": "kid", "commit_ref": "0123abc"}),
        ),
        (
            "request_budget",
            json!({"agent": "kid", "amount": "5usd/5h", "reason": "a long run"}),
            json!({"cmd": "request_budget", "agent": "kid", "amount": "5usd/5h", "reason": "a long run"}),
        ),
        (
            "request_update_meta_inputs",
            json!({"inputs": ["nixpkgs"]}),
            json!({"cmd": "request_update_meta_inputs", "inputs": ["nixpkgs"]}),
        ),
        (
            "request_schedule_prompt",
            json!({"targets": ["kid"], "body": "b", "first_fire_at_unix": 9}),
            json!({"cmd": "request_schedule_prompt", "targets": ["kid"], "body": "b", "first_fire_at_unix": 9}),
        ),
        (
            "request_egress",
            json!({"host": "pypi.org:443", "reason": "pip"}),
            json!({"cmd": "request_egress", "host": "pypi.org:443", "reason": "pip"}),
        ),
        (
            "fire_schedule_now",
            json!({"id": 3}),
            json!({"cmd": "fire_schedule_now", "id": 3}),
        ),
        (
            "cancel_schedule",
            json!({"id": 3}),
            json!({"cmd": "cancel_schedule", "id": 3}),
        ),
        (
            "edit_schedule",
            json!({"id": 3, "description": null}),
            json!({"cmd": "edit_schedule", "id": 3, "description": null}),
        ),
        (
            "list_schedules",
            json!({}),
            json!({"cmd": "list_schedules"}),
        ),
        (
            "get_logs",
            json!({"agent": "kid", "lines": 5}),
            json!({"cmd": "get_logs", "agent": "kid", "lines": 5}),
        ),
        (
            "get_host_journal",
            json!({"unit": "x.service", "priority": "err"}),
            json!({"cmd": "get_host_journal", "unit": "x.service", "priority": "err"}),
        ),
    ]
}

#[test]
fn every_tool_of_every_group_maps_to_its_socket_request() {
    let table = table();
    let mut named: Vec<&str> = ToolGroup::ALL
        .iter()
        .filter(|g| **g != ToolGroup::Execution)
        .flat_map(|g| g.tools().iter().copied())
        .collect();
    named.push("get_host_journal");
    for name in &named {
        assert!(
            table.iter().any(|(t, _, _)| t == name),
            "{name} is not in the table"
        );
    }
    for (tool, args, line) in table {
        let Value::Object(args) = args else {
            unreachable!()
        };
        let request = request_for(tool, Some(args.clone())).unwrap_or_else(|e| panic!("{e}"));
        let expected: Request = serde_json::from_value(line).unwrap();
        assert_eq!(request, expected, "{tool}");
        // The arguments fit the advertised schema: required ones present,
        // none outside its properties.
        let schema = spec(tool).unwrap().schema();
        let props = schema["properties"].as_object().unwrap();
        for key in args.keys() {
            assert!(
                props.contains_key(key),
                "{tool}: {key} is not in the schema"
            );
        }
        for req in schema["required"].as_array().unwrap() {
            assert!(args.contains_key(req.as_str().unwrap()), "{tool}: {req}");
        }
    }
}

#[test]
fn every_schema_names_only_fields_its_request_knows() {
    // A field in the schema that serde ignores would be a promise the tool
    // does not keep: each property alone (with the required ones) must
    // survive the round trip to the request line.
    for (tool, args, _) in table() {
        let schema = spec(tool).unwrap().schema();
        assert_eq!(schema["type"], "object", "{tool}");
        assert_eq!(schema["additionalProperties"], false, "{tool}");
        if tool == "request_next_turn" || tool == "recv" {
            continue;
        }
        let verb = if tool == "list_containers" {
            "list_descendants"
        } else {
            tool
        };
        let request = request_for(tool, args.as_object().cloned()).unwrap();
        let line = serde_json::to_value(&request).unwrap();
        assert_eq!(line["cmd"], verb);
        for key in args.as_object().unwrap().keys() {
            assert!(line.get(key).is_some(), "{tool}: {key} was dropped");
        }
    }
}

#[test]
fn bad_arguments_are_answered_in_words_naming_the_field() {
    let err = request_for(
        "send",
        Some(json!({"to": "bob"}).as_object().cloned().unwrap()),
    )
    .unwrap_err();
    assert!(err.contains("body"), "{err}");
    let err = request_for(
        "kill",
        Some(json!({"name": "Not Valid"}).as_object().cloned().unwrap()),
    )
    .unwrap_err();
    assert!(err.starts_with("kill:"), "{err}");
    assert!(
        request_for("rm_rf", None)
            .unwrap_err()
            .contains("unknown tool")
    );
}

#[test]
fn absent_groups_mean_the_agent_default_and_an_empty_value_means_none() {
    let s = Selection::from_values(None, None, ToolGroup::AGENT_DEFAULT).unwrap();
    assert_eq!(s.groups, ToolGroup::AGENT_DEFAULT);
    let names: Vec<&str> = s.hyperhive_tools().iter().map(|t| t.name).collect();
    assert!(names.contains(&"send") && names.contains(&"request_next_turn"));
    assert!(!names.contains(&"kill") && !names.contains(&"get_host_journal"));
    assert!(s.has_execution());
    let none = Selection::from_values(Some(""), Some(""), ToolGroup::AGENT_DEFAULT).unwrap();
    assert!(none.hyperhive_tools().is_empty());
    assert!(none.allowed_tools().is_empty());
}

#[test]
fn an_unknown_group_is_a_start_error_naming_it_and_the_known_ones() {
    let err = Selection::from_values(Some("messaging, telepathy"), None, &[]).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("\"telepathy\"") && text.contains("HIVE_TOOL_GROUPS"),
        "{text}"
    );
    assert!(text.contains("web_tools"), "{text}");
    let err = Selection::from_values(None, Some("root"), &[]).unwrap_err();
    assert!(err.to_string().contains("HIVE_CAPABILITIES"), "{err}");
}

#[test]
fn the_host_journal_tool_comes_only_with_its_capability() {
    let with = Selection::from_values(Some("meta"), Some("read_host_journal"), &[]).unwrap();
    assert!(
        with.hyperhive_tools()
            .iter()
            .any(|t| t.name == "get_host_journal")
    );
    let without = Selection::from_values(Some("meta"), Some("query_agent_state"), &[]).unwrap();
    assert!(
        !without
            .hyperhive_tools()
            .iter()
            .any(|t| t.name == "get_host_journal")
    );
}

#[test]
fn allowed_tools_prefix_each_server_and_add_the_web_builtins() {
    let s = Selection::from_values(Some("meta,execution,web_tools"), None, &[]).unwrap();
    assert_eq!(
        s.allowed_tools(),
        [
            "mcp__hyperhive__set_status",
            "mcp__hyperhive__get_agent_meta",
            "mcp__hyperhive__request_egress",
            "mcp__bash__run",
            "mcp__bash__status",
            "WebFetch",
            "WebSearch"
        ]
    );
    let manager = Selection::from_values(None, None, ToolGroup::MANAGER_DEFAULT).unwrap();
    assert!(
        manager
            .allowed_tools()
            .contains(&"mcp__hyperhive__request_apply_commit".to_owned())
    );
}
