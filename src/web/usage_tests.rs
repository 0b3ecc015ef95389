//! The usage page's rendering: totals and bars of the metered spend
//! scaled to the largest, the turns' reported cost shown apart, the
//! windows offered.

use super::*;
use crate::wire::model_log::{MeteredUsage, Tokens};
use crate::wire::turns::TurnUsage;

/// A row with `requests` metered of `input` tokens for `micro`, and a
/// turn reporting ten times that (never what the page sums).
fn row(key: &str, requests: u64, input: u64, micro: u64) -> UsageRow {
    UsageRow {
        key: key.into(),
        turns: 1,
        usage: TurnUsage {
            input_tokens: input * 10,
            ..TurnUsage::default()
        },
        cost_micro_usd: micro * 10,
        metered: MeteredUsage {
            requests,
            tokens: Tokens {
                input,
                ..Tokens::default()
            },
            cost_micro_usd: micro,
            unpriced: 0,
        },
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
fn the_page_sums_the_hives_metered_spend_and_scales_each_agents_bar_to_the_largest() {
    let days = [
        row("2026-12-01", 3, 300, 1_500_000),
        row("2026-12-02", 1, 100, 500_000),
    ];
    let agents = [row("bob", 1, 100, 10_000), row("alice", 3, 300, 1_990_000)];
    let page = usage_page("7d", &days, &agents, maud::html! {}).into_string();
    assert!(
        page.contains(
            "The hive: <strong>$2.00</strong> in 4 model requests, 400 tokens (metered); turns reported: 2"
        ),
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
    assert!(page.contains("<title>2026-12-01: $1.50, 3 requests, 300 tokens</title>"));
    assert!(
        page.contains("<td class=\"num\">$19.90</td>"),
        "alice's reported cost is shown, in its own column"
    );
    assert!(page.contains("<strong>7d</strong>") && page.contains(r#"href="/usage?since=30d""#));
}

#[test]
fn a_window_without_requests_or_turns_says_so_and_draws_no_chart() {
    let page = usage_page("24h", &[], &[], maud::html! {}).into_string();
    assert!(page.contains("Nothing metered or reported in this window."));
    assert!(!page.contains("<svg"));
    assert!(page.contains("The hive: <strong>$0.00</strong> in 0 model requests"));
}

#[test]
fn a_bar_is_zero_only_for_zero_and_never_longer_than_full() {
    assert_eq!(scaled(0, 10, 400), 0);
    assert_eq!(scaled(1, u64::MAX, 400), 1);
    assert_eq!(scaled(u64::MAX, u64::MAX, 400), 400);
    assert_eq!(scaled(5, 0, 400), 0);
}
