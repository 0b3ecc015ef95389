use serde_json::json;

use super::*;

fn seen(lines: &[Value]) -> TurnAccount {
    let mut account = TurnAccount::default();
    for line in lines {
        account.observe(line);
    }
    account.finish();
    account
}

#[test]
fn usage_and_cost_are_the_result_events_not_a_sum_of_the_assistant_events() {
    let usage = json!({"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 7});
    let account = seen(&[
        // stream-json repeats a message's usage per content block
        json!({"type": "assistant", "message": {"usage": usage, "content": [{"type": "text"}]}}),
        json!({"type": "assistant", "message": {"usage": usage, "content": [{"type": "text"}]}}),
        json!({"type": "result", "subtype": "success", "total_cost_usd": 0.0123456,
               "num_turns": 2, "duration_ms": 900, "duration_api_ms": 700,
               "usage": {"input_tokens": 3, "output_tokens": 5, "cache_read_input_tokens": 7,
                         "cache_creation_input_tokens": 11}}),
    ]);
    let usage = account.usage.unwrap();
    assert_eq!(
        (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens
        ),
        (3, 5, 7, 11)
    );
    assert_eq!(account.cost_micro_usd, Some(12_346));
    assert_eq!(
        (
            account.num_turns,
            account.duration_ms,
            account.duration_api_ms
        ),
        (Some(2), Some(900), Some(700))
    );
}

#[test]
fn tool_calls_are_named_and_marked_by_their_results_and_unfinished_ones_fail() {
    let account = seen(&[
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "secret"}},
            {"type": "tool_use", "id": "t2", "name": "mcp__hyperhive__send"}]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t2", "content": "ok"},
            {"type": "tool_result", "tool_use_id": "t1", "is_error": true}]}}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t3", "name": "Read"}]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "unknown"}]}}),
    ]);
    let calls: Vec<_> = account
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.ok))
        .collect();
    assert_eq!(
        calls,
        [
            ("mcp__hyperhive__send", true),
            ("Bash", false),
            ("Read", false)
        ]
    );
    assert_eq!(account.usage, None, "no result event, no usage");
    assert_eq!(account.cost_micro_usd, None);
}

#[test]
fn a_negative_or_missing_cost_is_no_cost() {
    let account = seen(&[json!({"type": "result", "total_cost_usd": -1.0})]);
    assert_eq!(account.cost_micro_usd, None);
}
