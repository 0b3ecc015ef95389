use super::*;
use crate::wire::model_log::MeteredUsage;
use crate::wire::turns::TurnUsage;

/// Used to be: `$0.247000` beside `$0.35` in one column, and tokens
/// without separators.
#[test]
fn a_cost_column_reads_in_cents_and_tokens_with_thousands_separators() {
    let row = |key: &str, micro, input| UsageRow {
        key: key.into(),
        metered: MeteredUsage {
            requests: 1,
            cost_micro_usd: micro,
            tokens: crate::wire::model_log::Tokens {
                input,
                ..Default::default()
            },
            ..MeteredUsage::default()
        },
        ..UsageRow::default()
    };
    let text = usage_table(
        &[row("alice", 247_000, 1_234_567), row("bob", 350_000, 950)],
        "agent",
        false,
    );
    let cells = |name: &str| -> Vec<String> {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap();
        line.split_whitespace().map(str::to_owned).collect()
    };
    assert_eq!(
        cells("alice")[2..=6],
        ["1,234,567", "0", "0", "0", "$0.25"],
        "{text}"
    );
    assert_eq!(
        cells("bob")[2..=6],
        ["950", "0", "0", "0", "$0.35"],
        "{text}"
    );
    assert_eq!(cells("total")[2], "1,235,517", "{text}");
    assert!(!text.contains("$0.247"), "{text}");
}

#[test]
fn the_usage_table_ends_with_the_total_except_by_subtree() {
    let row = |key: &str, requests, micro| UsageRow {
        key: key.into(),
        turns: 7,
        usage: TurnUsage {
            input_tokens: 10,
            ..TurnUsage::default()
        },
        cost_micro_usd: 9_000_000,
        metered: MeteredUsage {
            requests,
            cost_micro_usd: micro,
            ..MeteredUsage::default()
        },
    };
    let rows = [row("alice", 2, 1_000_000), row("bob", 1, 500_000)];
    let text = usage_table(&rows, "agent", false);
    let last: Vec<&str> = text.lines().last().unwrap().split_whitespace().collect();
    assert_eq!(
        last,
        [
            "total", "3", "0", "0", "0", "0", "$1.50", "14", "20", "$18.00"
        ],
        "the metered requests and cost, then the turns' reported figures:\n{text}"
    );
    assert!(text.lines().next().unwrap().contains("REPORTED-COST"));
    assert!(!text.contains("+?"));
    assert!(!usage_table(&rows, "subtree", true).contains("total"));
}

#[test]
fn a_request_without_a_price_marks_the_cost_and_says_it_is_not_counted() {
    let row = UsageRow {
        key: "alice".into(),
        metered: MeteredUsage {
            requests: 2,
            cost_micro_usd: 10,
            unpriced: 1,
            ..MeteredUsage::default()
        },
        ..UsageRow::default()
    };
    let text = usage_table(&[row], "agent", false);
    assert!(text.contains("$0.00001+?"), "{text}");
    assert!(text.contains("their cost is not counted"), "{text}");
}

#[test]
fn the_table_shows_each_budget_with_its_window_and_whether_it_holds() {
    let rows = [
        BudgetRow {
            scope: crate::wire::spend::SpendScope::Hive,
            amount: "100usd/day".parse().unwrap(),
            source: SpendSource::Config,
            spent: 3_200_000,
            since: 0,
            reached: false,
        },
        BudgetRow {
            scope: crate::wire::spend::SpendScope::Subtree(
                crate::wire::ident::Ident::new("ann").unwrap(),
            ),
            amount: "1usd/5h".parse().unwrap(),
            source: SpendSource::Operator,
            spent: 1_000_000,
            since: 0,
            reached: true,
        },
    ];
    let text = budgets_table(&rows);
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        })
        .collect();
    assert_eq!(
        lines,
        [
            vec!["COVERS", "AMOUNT", "SPENT", "FROM", "STATE"],
            vec![
                "the hive",
                "100usd/day",
                "$3.20 of $100.00 today",
                "config",
                "ok"
            ],
            vec![
                "ann and under",
                "1usd/5h",
                "$1.00 of $1.00 in 5h",
                "operator",
                "reached"
            ],
        ]
    );
    assert!(budgets_table(&[]).starts_with("no budgets"));
}
