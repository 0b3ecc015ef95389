use super::*;
use crate::wire::turns::TurnUsage;

#[test]
fn dollars_show_cents_or_every_micro_dollar() {
    assert_eq!(dollars(0), "$0.00");
    assert_eq!(dollars(20_000_000), "$20.00");
    assert_eq!(dollars(12_346), "$0.012346");
}

#[test]
fn the_usage_table_ends_with_the_total_except_by_subtree() {
    let row = |key: &str, turns, micro| UsageRow {
        key: key.into(),
        turns,
        usage: TurnUsage {
            input_tokens: 10,
            ..TurnUsage::default()
        },
        cost_micro_usd: micro,
    };
    let rows = [row("alice", 2, 1_000_000), row("bob", 1, 500_000)];
    let text = usage_table(&rows, "agent", false);
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("total"), "{text}");
    assert!(last.contains("$1.50") && last.contains(" 3 "), "{text}");
    assert!(!usage_table(&rows, "subtree", true).contains("total"));
}
