//! The budgets' section: a reached cap says so, and only the operator's
//! caps on the hive or a subtree get a button to remove them.

use super::*;
use crate::testing::id;

fn row(scope: SpendScope, amount: &str, source: SpendSource, spent: u64) -> BudgetRow {
    let amount: SpendCap = amount.parse().unwrap();
    BudgetRow {
        reached: amount.reached_by(spent),
        scope,
        amount,
        source,
        spent,
        since: 0,
    }
}

#[test]
fn a_reached_budget_says_so_and_a_config_default_has_no_unset_button() {
    let rows = [
        row(
            SpendScope::Subtree(id("alice")),
            "20usd/day",
            SpendSource::Operator,
            20_000_000,
        ),
        row(
            SpendScope::Agent(id("bob")),
            "5usd/day",
            SpendSource::Config,
            1_000_000,
        ),
    ];
    let html = section(&rows, &[id("alice"), id("bob")], "t0k").into_string();
    assert!(
        html.contains(r#"<span class="state bad">reached</span> $20.00 of $20.00 today"#),
        "{html}"
    );
    assert!(html.contains("$1.00 of $5.00 today"), "{html}");
    assert_eq!(
        html.matches(r#"action="/budgets/unset""#).count(),
        1,
        "{html}"
    );
    assert!(
        html.contains(r#"<input type="hidden" name="scope" value="alice">"#),
        "{html}"
    );
    assert!(html.contains(r#"<option value="bob">bob and under</option>"#));
}
