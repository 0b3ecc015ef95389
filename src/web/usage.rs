//! The usage page: the budgets ([`super::budgets`]), and what the agents
//! spent, as the model gateway metered it — the hive's total over a
//! window, a bar chart per UTC day and one per agent, and a table of each
//! agent's metered figures with its turns' reported cost beside (never
//! summed). The charts are SVG rendered here with the page (no script,
//! nothing fetched: within the CSP); every label is escaped by the
//! template.

use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::pages::failed;
use super::views::{Nav, layout, refusal};
use super::{Web, budgets};
use crate::service::HiveError;
use crate::wire::spend::{dollars, span_seconds, tokens};
use crate::wire::turns::{UsageBy, UsageRow};

/// The windows the page offers; `all` is every turn the journal keeps.
const WINDOWS: &[&str] = &["24h", "7d", "30d", "all"];

/// `?since=` of the page.
#[derive(Debug, Deserialize)]
pub struct UsageQuery {
    #[serde(default)]
    pub since: Option<String>,
}

/// `GET /usage[?since=24h|7d|30d|all]` (default `7d`).
pub async fn page(State(web): State<Web>, Query(q): Query<UsageQuery>) -> Response {
    let window = q.since.as_deref().unwrap_or("7d");
    let since_secs = match window {
        "all" => None,
        w if WINDOWS.contains(&w) => span_seconds(w),
        other => {
            let shown: String = other.chars().take(20).collect();
            let message = format!("since {shown:?}: choose one of {}", WINDOWS.join(", "));
            return (axum::http::StatusCode::BAD_REQUEST, refusal(&message)).into_response();
        }
    };
    let read = async {
        let hive = web.operator("usage", None).await?;
        let days = hive.usage().sums(since_secs, UsageBy::Day).await?;
        let agents = hive.usage().sums(since_secs, UsageBy::Agent).await?;
        let caps = web
            .operator("budgets", None)
            .await?
            .usage()
            .budgets()
            .await?;
        let names = web.operator("list", None).await?.list().await?;
        let budgets = budgets::section(&caps, &names, web.token.as_str());
        Ok::<_, HiveError>((days, agents, budgets))
    };
    match read.await {
        Ok((days, agents, budgets)) => usage_page(window, &days, &agents, budgets).into_response(),
        Err(err) => failed(&err),
    }
}

/// The page: budgets, total, charts, table.
pub fn usage_page(window: &str, days: &[UsageRow], agents: &[UsageRow], budgets: Markup) -> Markup {
    let mut total = UsageRow {
        key: "hive".into(),
        ..UsageRow::default()
    };
    agents.iter().for_each(|row| total.add(row));
    let mut by_cost: Vec<&UsageRow> = agents.iter().collect();
    by_cost.sort_by(|a, b| spent(b).cmp(&spent(a)).then(a.key.cmp(&b.key)));
    layout(
        "Usage",
        Nav::Usage,
        html! {
            (budgets)
            h2 { "Spent" }
            p.summary {
                "Window: "
                @for w in WINDOWS {
                    @if *w == window { strong { (w) } } @else { a href={ "/usage?since=" (w) } { (w) } }
                    " "
                }
            }
            p.total {
                "The hive: " strong { (dollars(spent(&total))) } " in " (total.metered.requests)
                " model requests, " (metered_tokens(&total)) " tokens (metered); turns reported: " (total.turns)
                @if total.metered.unpriced > 0 {
                    " — " (total.metered.unpriced) " requests of models without a price are not in the cost"
                }
            }
            @if agents.is_empty() {
                p { "Nothing metered or reported in this window." }
            } @else {
                h2 { "Per day (UTC)" }
                (columns(days))
                h2 { "Per agent" }
                (bars(&by_cost))
                (table(&by_cost))
            }
        },
    )
}

/// Every token a row's metered requests used (input, output, cache read
/// and write).
fn metered_tokens(row: &UsageRow) -> String {
    tokens(row.metered.tokens.total())
}

/// What a row's metered requests cost: the spend.
fn spent(row: &UsageRow) -> u64 {
    row.metered.cost_micro_usd
}

/// A bar's length out of `full` for `value` of `max` (at least 1 for a
/// value above 0, so a small spend still shows).
fn scaled(value: u64, max: u64, full: u64) -> u64 {
    if max == 0 || value == 0 {
        return 0;
    }
    (u128::from(value) * u128::from(full) / u128::from(max)).max(1) as u64
}

/// One column per day, oldest first, height by cost.
fn columns(days: &[UsageRow]) -> Markup {
    const HEIGHT: u64 = 160;
    const WIDTH: u64 = 36;
    let max = days.iter().map(spent).max().unwrap_or(0);
    let width = (days.len() as u64).max(1) * WIDTH;
    html! {
        svg.chart role="img" aria-label="cost per day" width=(width) height=(HEIGHT + 40) viewBox={ "0 0 " (width) " " (HEIGHT + 40) } {
            @for (i, d) in days.iter().enumerate() {
                @let h = scaled(spent(d), max, HEIGHT);
                @let x = i as u64 * WIDTH;
                g {
                    title { (d.key) ": " (dollars(spent(d))) ", " (d.metered.requests) " requests, " (metered_tokens(d)) " tokens" }
                    rect.bar x=(x + 4) y=(HEIGHT - h + 14) width=(WIDTH - 8) height=(h) {}
                    text.value x=(x + WIDTH / 2) y=(HEIGHT - h + 10) text-anchor="middle" { (dollars(spent(d))) }
                    text.label x=(x + WIDTH / 2) y=(HEIGHT + 30) text-anchor="middle" { (d.key.get(5..).unwrap_or(&d.key)) }
                }
            }
        }
    }
}

/// One bar per agent, largest first, length by cost.
fn bars(agents: &[&UsageRow]) -> Markup {
    const ROW: u64 = 22;
    const LABEL: u64 = 140;
    const FULL: u64 = 400;
    let max = agents.first().map_or(0, |a| spent(a));
    let height = (agents.len() as u64).max(1) * ROW;
    let width = LABEL + FULL + 90;
    html! {
        svg.chart role="img" aria-label="cost per agent" width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) } {
            @for (i, a) in agents.iter().enumerate() {
                @let y = i as u64 * ROW;
                @let w = scaled(spent(a), max, FULL);
                g {
                    title { (a.key) ": " (dollars(spent(a))) ", " (a.metered.requests) " requests, " (metered_tokens(a)) " tokens" }
                    text.label x=(LABEL - 6) y=(y + 15) text-anchor="end" { (a.key) }
                    rect.bar x=(LABEL) y=(y + 3) width=(w) height=(ROW - 6) {}
                    text.value x=(LABEL + w + 6) y=(y + 15) { (dollars(spent(a))) }
                }
            }
        }
    }
}

/// The numbers behind the bars: metered, then the turns as reported.
fn table(agents: &[&UsageRow]) -> Markup {
    html! {
        table.rows {
            thead { tr {
                th { "agent" } th { "requests" } th { "input" } th { "output" } th { "cache read" }
                th { "cache write" } th { "cost" } th { "turns" } th { "reported cost" }
            } }
            tbody {
                @for a in agents {
                    @let m = &a.metered;
                    tr {
                        td { a href={ "/agent/" (a.key) } { (a.key) } }
                        td.num { (m.requests) }
                        td.num { (tokens(m.tokens.input)) }
                        td.num { (tokens(m.tokens.output)) }
                        td.num { (tokens(m.tokens.cache_read)) }
                        td.num { (tokens(m.tokens.cache_write)) }
                        td.num { (dollars(m.cost_micro_usd)) @if m.unpriced > 0 { " +?" } }
                        td.num { (a.turns) }
                        td.num { (dollars(a.cost_micro_usd)) }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
