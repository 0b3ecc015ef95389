//! Fixtures shared by the unit tests: names, a config under a temp dir, and
//! a hive on the fake driver with a manual clock.

use std::path::Path;
use std::sync::Arc;

use crate::clock::ManualClock;
use crate::config::{Config, DriverKind};
use crate::containers::fake::FakeDriver;
use crate::service::Hive;
use crate::store::Store;
use crate::wire::ident::Ident;

/// A topology from `(agent, parent)` pairs (`None`: a root).
pub fn topology(edges: &[(&str, Option<&str>)]) -> crate::hive::topology::Topology {
    crate::hive::topology::Topology::new(
        edges
            .iter()
            .map(|(child, parent)| (id(child), parent.map(id)))
            .collect(),
    )
}

/// A pending `spawn` approval request for `agent`.
pub fn new_approval(agent: &str) -> crate::hive::approvals::NewApproval {
    crate::hive::approvals::NewApproval {
        agent: id(agent),
        kind: crate::wire::host::ApprovalKind::Spawn,
        commit_ref: String::new(),
        description: None,
    }
}

/// A schedule owned by `ruth` saying "standup" to `targets`, first due at
/// 100, from approval 7.
pub fn new_schedule(
    targets: &[&str],
    interval: Option<u64>,
) -> crate::store::schedules::NewSchedule {
    crate::store::schedules::NewSchedule {
        owner: "ruth".into(),
        body: "standup".into(),
        interval_seconds: interval,
        first_fire_at: 100,
        source_approval_id: Some(7),
        description: None,
        targets: targets.iter().map(|t| (*t).to_owned()).collect(),
    }
}

/// A name, for tests.
/// A metered `POST /v1/messages` answered 200, nothing counted: tests set
/// the fields they need (`..model_request()`).
pub fn model_request() -> crate::wire::model_log::MeterRow {
    crate::wire::model_log::MeterRow {
        at_ms: 0,
        route: "POST /v1/messages".into(),
        model: Some("claude-haiku-4-5".into()),
        status: 200,
        tokens: crate::wire::model_log::Tokens::default(),
        cost_micro_usd: None,
        ms: 1,
        request_id: None,
        error: None,
    }
}

/// A message from alice in the operator's inbox, a day after the epoch.
pub fn inbox_message(
    id: i64,
    body: &str,
    in_reply_to: Option<i64>,
) -> crate::wire::agent::InboxRow {
    crate::wire::agent::InboxRow {
        id,
        from: "alice".into(),
        body: body.into(),
        at: 86_400,
        in_reply_to,
    }
}

pub fn id(s: &str) -> Ident {
    Ident::new(s).unwrap()
}

/// A roster row of a stopped agent with nothing else set.
pub fn status_row(name: &str) -> crate::wire::host::AgentStatusRow {
    crate::wire::host::AgentStatusRow {
        name: id(name),
        running: false,
        failed: false,
        needs_update: false,
        needs_login: false,
        deployed_sha: None,
        pending_reminders: 0,
        paused: false,
        parent: None,
        active_model: None,
        status_text: None,
        status_set_at: None,
        url: None,
        failure: None,
        session_state: None,
        session_message: None,
        session_since: None,
        crashed: false,
        running_since: None,
        budget: None,
        spent_today_micro_usd: None,
        transition: None,
    }
}

/// The default config with state and sockets under `dir` and the fake driver.
pub fn config_in(dir: &Path) -> Config {
    Config {
        state_dir: dir.join("state"),
        runtime_dir: dir.join("run"),
        driver: DriverKind::Fake,
        ..Config::default()
    }
}

/// A hive on `store` whose host has the manager's container (stopped).
pub fn hive_on(config: Config, store: Store, clock: Arc<ManualClock>) -> (Hive, Arc<FakeDriver>) {
    let driver = Arc::new(FakeDriver::with_containers(config.profile, [id("ruth")]));
    let hive = Hive::new(config, store, driver.clone(), clock).unwrap();
    (hive, driver)
}

/// A hive on an in-memory store at unix time `now` on a host with no
/// container yet (not even the manager's).
pub fn hive_without_containers(config: Config, now: i64) -> (Hive, Arc<FakeDriver>) {
    let driver = Arc::new(FakeDriver::new(config.profile));
    let store = Store::open_in_memory().unwrap();
    let hive = Hive::new(
        config,
        store,
        driver.clone(),
        Arc::new(ManualClock::new(now)),
    )
    .unwrap();
    (hive, driver)
}

/// An `init_config` of `name` requested and approved: its proposed repo.
pub async fn init_config_approved(hive: &Hive, name: &str) -> std::path::PathBuf {
    use crate::hive::approvals::NewApproval;
    use crate::wire::host::ApprovalKind;
    let row = hive
        .request_approval(NewApproval {
            agent: id(name),
            kind: ApprovalKind::InitConfig,
            commit_ref: String::new(),
            description: None,
        })
        .await
        .unwrap();
    hive.approve(row.id, None).await.unwrap();
    hive.repos().proposed(&id(name))
}

/// A hive on an in-memory store at unix time 1000 whose start jobs take
/// `delay` (the unit `activating` meanwhile), as slowly booting containers.
pub fn hive_with_slow_starts(
    config: Config,
    delay: std::time::Duration,
) -> (Hive, Arc<FakeDriver>) {
    let driver =
        Arc::new(FakeDriver::with_containers(config.profile, [id("ruth")]).with_job_delay(delay));
    let store = Store::open_in_memory().unwrap();
    let clock = Arc::new(ManualClock::new(1000));
    let hive = Hive::new(config, store, driver.clone(), clock).unwrap();
    (hive, driver)
}

/// A hive on an in-memory store at unix time `now`.
pub fn hive_at(config: Config, now: i64) -> (Hive, Arc<FakeDriver>) {
    hive_on(
        config,
        Store::open_in_memory().unwrap(),
        Arc::new(ManualClock::new(now)),
    )
}

/// The bodies of the manager's (`ruth`) messages from `system`, oldest
/// first, that contain any of `words`.
pub async fn manager_events(hive: &Hive, words: &[&str]) -> Vec<String> {
    hive.store()
        .run(|c| {
            let mut stmt = c.prepare(
                "SELECT body FROM messages WHERE recipient = 'ruth' AND sender = ?1 ORDER BY id",
            )?;
            let rows = stmt.query_map([crate::wire::events::SYSTEM_SENDER], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })
        .await
        .unwrap()
        .into_iter()
        .filter(|b: &String| words.iter().any(|w| b.contains(w)))
        .collect()
}

/// git as the manager runs it in its proposed repo; its stdout.
#[allow(clippy::disallowed_methods)] // the test plays the manager, who runs git itself
pub fn git(repo: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["-c", "user.name=ruth", "-c", "user.email=ruth@hive"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// The manager writes `files` into its proposed repo and commits; the sha.
pub fn commit(repo: &Path, files: &[(&str, &str)]) -> String {
    for (path, text) in files {
        let file = repo.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    }
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", "change"]);
    git(repo, &["rev-parse", "HEAD"])
}

/// The agent racing the daemon from inside its state directory: a thread
/// that plays `round` (say, swap a directory for a link and back) again
/// and again until the attacker is dropped.
#[derive(Debug)]
pub struct Attacker {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Attacker {
    pub fn start(mut round: impl FnMut() + Send + 'static) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let stop = stop.clone();
            move || {
                while !stop.load(Ordering::Relaxed) {
                    round();
                }
            }
        });
        Self {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Attacker {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One round of the commonest attack: `path` moved to `aside` and a link
/// to `target` planted in its place for `hold`, then put back, then
/// `hold` again as it was. Nothing happens while `path` is missing.
pub fn swap_for_a_link(path: &Path, aside: &Path, target: &Path, hold: std::time::Duration) {
    if std::fs::rename(path, aside).is_ok() {
        let _ = std::os::unix::fs::symlink(target, path);
        std::thread::sleep(hold);
        let _ = std::fs::remove_file(path);
        let _ = std::fs::rename(aside, path);
    }
    std::thread::sleep(hold);
}
