//! The usage page's rendering: totals, bars scaled to the largest, the
//! windows offered.

use super::*;
use crate::wire::turns::TurnUsage;

fn row(key: &str, turns: u64, input_tokens: u64, micro: u64) -> UsageRow {
    UsageRow {
        key: key.into(),
        turns,
        usage: TurnUsage {
            input_tokens,
            ..TurnUsage::default()
        },
        cost_micro_usd: micro,
    }
}

/// The `width` of each `rect` in document order.
fn bar_widths(page: &str) -> Vec<u64> {
    page.match_indices("<rect class=\"bar\"")
        .map(|(at, _)| {
            let rest = &page[at..];
            let w = rest.find("width=\"").unwrap() + 7;
            rest[w..].split('"').next().unwrap().parse().unwrap()
        })
        .collect()
}

#[test]
fn the_page_sums_the_hive_and_scales_each_agents_bar_to_the_largest() {
    let days = [
        row("2026-12-01", 3, 300, 1_500_000),
        row("2026-12-02", 1, 100, 500_000),
    ];
    let agents = [row("bob", 1, 100, 10_000), row("alice", 3, 300, 1_990_000)];
    let page = usage_page("7d", &days, &agents, maud::html! {}).into_string();
    assert!(
        page.contains("The hive: <strong>$2.00</strong> in 4 turns, 400 tokens"),
        "{page}"
    );
    // Two day columns, then two agent bars: alice (largest) full length,
    // bob's small spend still visible.
    let widths = bar_widths(&page);
    assert_eq!(widths.len(), 4, "{widths:?}");
    assert_eq!(widths[2], 400, "alice's bar is the full length");
    assert_eq!(widths[3], 2, "bob's $0.01 against $1.99");
    assert!(
        page.find(">alice<").unwrap() < page.find(">bob<").unwrap(),
        "largest first"
    );
    assert!(page.contains("<title>2026-12-01: $1.50, 3 turns, 300 tokens</title>"));
    assert!(page.contains("<strong>7d</strong>") && page.contains(r#"href="/usage?since=30d""#));
}

#[test]
fn a_window_without_turns_says_so_and_draws_no_chart() {
    let page = usage_page("24h", &[], &[], maud::html! {}).into_string();
    assert!(page.contains("No turns in this window."));
    assert!(!page.contains("<svg"));
    assert!(page.contains("The hive: <strong>$0.00</strong> in 0 turns"));
}

#[test]
fn a_bar_is_zero_only_for_zero_and_never_longer_than_full() {
    assert_eq!(scaled(0, 10, 400), 0);
    assert_eq!(scaled(1, u64::MAX, 400), 1);
    assert_eq!(scaled(u64::MAX, u64::MAX, 400), 400);
    assert_eq!(scaled(5, 0, 400), 0);
}
