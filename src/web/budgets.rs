//! The budgets on the usage page: every cap in force with what its window
//! holds (as `hivectl budget` lists them), a form to set one on the hive
//! or an agent's subtree, and a button to remove the operator's. The forms
//! post to [`set`] and [`unset`], which call the service as host.sock's
//! `set_budget` and `unset_budget` do.

use axum::Form;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use maud::{Markup, html};
use serde::Deserialize;

use super::Web;
use super::pages::failed;
use super::views::{refusal, token};
use crate::wire::ident::Ident;
use crate::wire::spend::{BudgetRow, SpendCap, SpendScope, SpendSource};

/// The budgets' section of the usage page.
pub fn section(rows: &[BudgetRow], agents: &[Ident], csrf: &str) -> Markup {
    html! {
        h2 { "Budgets" }
        @if rows.is_empty() {
            p { "No budget: nothing holds an agent's turns for what it spends." }
        } @else {
            table.rows {
                thead { tr { th { "covers" } th { "amount" } th { "spent" } th { "from" } th { "actions" } } }
                tbody {
                    @for b in rows {
                        tr {
                            td { (b.scope.words()) }
                            td.mono { (b.amount.to_string()) }
                            td {
                                @if b.reached { span class="state bad" { "reached" } " " }
                                (b.amount.words(b.spent))
                            }
                            td { @match b.source { SpendSource::Operator => "operator", SpendSource::Config => "config" } }
                            td.actions {
                                @if let (SpendSource::Operator, Some(scope)) = (b.source, form_scope(&b.scope)) {
                                    form method="post" action="/budgets/unset" {
                                        (token(csrf))
                                        input type="hidden" name="scope" value=(scope);
                                        button type="submit" data-confirm={ "Remove the budgets on " (b.scope.words()) "?" } { "unset" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        form.inline method="post" action="/budgets/set" {
            (token(csrf))
            label { "on " select name="scope" {
                option value="" { "the hive" }
                @for a in agents { option value=(a) { (a) " and under" } }
            } }
            label { " amount " input type="text" name="amount" required placeholder="20usd/day" title="20usd/day, 2000000tokens/day or 5usd/5h"; }
            button type="submit" { "set budget" }
        }
    }
}

/// The `scope` a form names for a cap's scope: `""` the hive, else the
/// agent; `None` for a config default on one agent (not the operator's).
fn form_scope(scope: &SpendScope) -> Option<&str> {
    match scope {
        SpendScope::Hive => Some(""),
        SpendScope::Subtree(n) => Some(n.as_str()),
        SpendScope::Agent(_) => None,
    }
}

/// A budget form: the scope (`""` the hive) and, to set, the amount.
#[derive(Debug, Deserialize)]
pub struct BudgetForm {
    #[serde(default)]
    pub scope: String,
    #[serde(default)]
    pub amount: Option<String>,
}

/// The form's scope: `None` the hive, else a valid agent name; the
/// refusal's words otherwise.
fn scope_of(form: &BudgetForm) -> Result<Option<Ident>, String> {
    if form.scope.is_empty() {
        return Ok(None);
    }
    Ident::new(form.scope.clone())
        .map(Some)
        .map_err(|err| err.to_string())
}

fn bad(message: &str) -> Response {
    (StatusCode::BAD_REQUEST, refusal(message)).into_response()
}

/// `POST /budgets/set`.
pub async fn set(State(web): State<Web>, Form(form): Form<BudgetForm>) -> Response {
    let scope = match scope_of(&form) {
        Ok(s) => s,
        Err(message) => return bad(&message),
    };
    let amount = form.amount.as_deref().unwrap_or_default().trim();
    let cap: SpendCap = match amount.parse() {
        Ok(cap) => cap,
        Err(err) => return bad(&err.to_string()),
    };
    let done = async {
        let hive = web.operator("set_budget", scope.as_ref()).await?;
        hive.usage().set_budget(scope.as_ref(), cap).await
    };
    match done.await {
        Ok(_) => Redirect::to("/usage").into_response(),
        Err(err) => failed(&err),
    }
}

/// `POST /budgets/unset`.
pub async fn unset(State(web): State<Web>, Form(form): Form<BudgetForm>) -> Response {
    let scope = match scope_of(&form) {
        Ok(s) => s,
        Err(message) => return bad(&message),
    };
    let done = async {
        let hive = web.operator("unset_budget", scope.as_ref()).await?;
        hive.usage().unset_budget(scope.as_ref()).await
    };
    match done.await {
        Ok(_) => Redirect::to("/usage").into_response(),
        Err(err) => failed(&err),
    }
}

#[cfg(test)]
#[path = "budgets_tests.rs"]
mod tests;
