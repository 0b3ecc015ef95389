use super::*;
use crate::testing::id;

fn cap(text: &str) -> SpendCap {
    text.parse().unwrap()
}

/// ruth (root) > ann > bob; cid under ruth.
fn tree() -> (Topology, Vec<Ident>) {
    let parents = BTreeMap::from([
        (id("ruth"), None),
        (id("ann"), Some(id("ruth"))),
        (id("bob"), Some(id("ann"))),
        (id("cid"), Some(id("ruth"))),
    ]);
    let agents = parents.keys().cloned().collect();
    (Topology::new(parents), agents)
}

fn usd(micro: u64) -> Amounts {
    Amounts {
        micro_usd: micro,
        tokens: micro / 10,
    }
}

/// The caps in force when only the operator set `caps`.
fn operator_caps(caps: &[(SpendScope, SpendCap)], agents: &[Ident]) -> Vec<InForce> {
    in_force(caps, Defaults::default(), agents)
}

const NOON: i64 = 86_400 * 10 + 12 * 3600;
const MIDNIGHT: i64 = 86_400 * 10;

#[test]
fn the_operators_cap_replaces_the_configs_of_its_scope_and_unit_only() {
    let (_, agents) = tree();
    let hive_default = [cap("100usd/day"), cap("9000000tokens/day")];
    let each = [cap("5usd/day")];
    let operator = [
        (SpendScope::Hive, cap("50usd/day")),
        (SpendScope::Subtree(id("ann")), cap("1usd/5h")),
    ];
    let caps = in_force(
        &operator,
        Defaults {
            hive: &hive_default,
            each_agent: &each,
        },
        &agents,
    );
    let shown: Vec<(String, String, SpendSource)> = caps
        .iter()
        .map(|c| (c.scope.words(), c.cap.to_string(), c.source))
        .collect();
    use SpendSource::{Config, Operator};
    assert_eq!(
        shown,
        [
            ("the hive".into(), "50usd/day".into(), Operator),
            ("the hive".into(), "9000000tokens/day".into(), Config),
            ("ann and under".into(), "1usd/5h".into(), Operator),
            ("bob".into(), "5usd/day".into(), Config),
            ("cid".into(), "5usd/day".into(), Config),
            ("ruth".into(), "5usd/day".into(), Config),
        ]
    );
}

#[test]
fn a_subtree_cap_sums_its_agent_and_everything_under_it_and_holds_them_all() {
    let (topology, agents) = tree();
    let caps = operator_caps(
        &[(SpendScope::Subtree(id("ann")), cap("1usd/day"))],
        &agents,
    );
    let today = Spent::from([
        ("ann".into(), usd(400_000)),
        ("bob".into(), usd(600_000)),
        ("cid".into(), usd(5_000_000)),
    ]);
    let spent = BTreeMap::from([(MIDNIGHT, today)]);
    let e = evaluate(&caps, &topology, &agents, &spent, NOON);
    assert_eq!(e.rows.len(), 1);
    assert_eq!((e.rows[0].spent, e.rows[0].reached), (1_000_000, true));
    assert_eq!(e.rows[0].since, MIDNIGHT);
    let held: Vec<(&str, &str)> = e
        .held
        .iter()
        .map(|(n, h)| (n.as_str(), h.words.as_str()))
        .collect();
    assert_eq!(
        held,
        [
            ("ann", "$1.00 of $1.00 today"),
            ("bob", "$1.00 of $1.00 today for ann and under"),
        ],
        "cid spent more, but is not under ann"
    );
}

#[test]
fn below_the_limit_nothing_is_held_and_a_window_without_sums_spent_nothing() {
    let (topology, agents) = tree();
    let caps = operator_caps(
        &[
            (SpendScope::Hive, cap("2usd/day")),
            (SpendScope::Subtree(id("bob")), cap("1usd/5h")),
        ],
        &agents,
    );
    let spent = BTreeMap::from([(MIDNIGHT, Spent::from([("bob".into(), usd(1_999_999))]))]);
    let e = evaluate(&caps, &topology, &agents, &spent, NOON);
    assert!(e.held.is_empty(), "{:?}", e.held);
    let rows: Vec<(u64, bool)> = e.rows.iter().map(|r| (r.spent, r.reached)).collect();
    assert_eq!(rows, [(1_999_999, false), (0, false)]);
    assert_eq!(e.rows[1].since, NOON - 5 * 3600);
}

#[test]
fn the_hive_cap_counts_every_turn_kept_and_the_nearest_reached_cap_is_shown() {
    let (topology, agents) = tree();
    let caps = in_force(
        &[
            (SpendScope::Hive, cap("1000tokens/day")),
            (SpendScope::Subtree(id("ruth")), cap("1usd/day")),
        ],
        Defaults {
            hive: &[],
            each_agent: &[cap("0.1usd/day")],
        },
        &agents,
    );
    // "gone" was destroyed: not in the topology, its turns still count
    // for the hive.
    let today = Spent::from([("gone".into(), usd(9_000)), ("bob".into(), usd(1_000_000))]);
    let e = evaluate(
        &caps,
        &topology,
        &agents,
        &BTreeMap::from([(MIDNIGHT, today)]),
        NOON,
    );
    let hive = e.rows.iter().find(|r| r.scope == SpendScope::Hive).unwrap();
    assert_eq!((hive.spent, hive.reached), (100_900, true));
    assert_eq!(e.held.len(), 4, "the hive cap holds everyone");
    assert_eq!(e.held[&id("bob")].words, "$1.00 of $0.10 today", "its own");
    assert_eq!(
        e.held[&id("ann")].words,
        "$1.00 of $1.00 today for ruth and under",
        "an ancestor's before the hive's"
    );
    assert_eq!(e.held[&id("ruth")].scope, SpendScope::Subtree(id("ruth")));
    assert_eq!(
        e.held[&id("cid")].words,
        "$1.00 of $1.00 today for ruth and under"
    );
}

#[test]
fn a_rolling_window_lets_go_once_the_spend_falls_out_of_it() {
    let (topology, agents) = tree();
    let caps = operator_caps(&[(SpendScope::Subtree(id("cid")), cap("1usd/1h"))], &agents);
    let starts = window_starts(&caps, NOON);
    assert_eq!(starts, BTreeSet::from([NOON - 3600]));
    // The service sums per start; an hour later the same turn is before it.
    let at = |now: i64, spent: u64| {
        let sums = BTreeMap::from([(now - 3600, Spent::from([("cid".into(), usd(spent))]))]);
        evaluate(&caps, &topology, &agents, &sums, now).held.len()
    };
    assert_eq!(at(NOON, 1_000_000), 1);
    assert_eq!(at(NOON + 3600, 0), 0);
}
