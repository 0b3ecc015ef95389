//! Agents' config repos as the service uses them: seeding (an approved
//! `init_config`, and agents that predate the repos, at start), and a
//! manager's `apply_commit` taken in: resolved, fetched, tagged and
//! validated before its row is shown to the operator.
//!
//! Two kinds of refusal (issue 28): a request that breaks a rule before
//! anything is fetched (unknown agent, no config repo, a sha the proposed
//! repo does not have, alternates or a `.git` file) is answered with the
//! error and leaves no row; a proposal that was fetched and fails
//! validation is a row that ends `failed` at once, the reason in its note,
//! with one `approval_resolved` to the manager (and the answer
//! `approval_failed`). The row is held (claimed) while its commit is
//! fetched and checked, so no decision is taken on a row whose
//! `fetched_sha` is not yet known.
//!
//! Decision: the fetched commit, not the manager's ref, is what the row
//! stands for (`fetched_sha`, tag `proposal/<id>`): amending or
//! force-moving a branch in the proposed repo afterwards changes nothing.

use super::approvals::{Admitted, Queued, admit_row, finish_row};
use super::{Hive, HiveError};
use crate::config::{Config, DriverKind};
use crate::containers::Profile;
use crate::hive::proposal::{self, AgentConfig, EntryKind, Tag};
use crate::hive::{arguments, flake_lock};
use crate::repos::{Repos, Sandbox};
use crate::store::{agents, approvals};
use crate::systemd::dbus::{handover, userns};
use crate::wire::events::HelperEvent;
use crate::wire::host::{Approval, ApprovalKind};
use crate::wire::ident::Ident;

/// The repos of a hive with `config`: the upload side sandboxed in a
/// transient unit under the real driver, not under the fake one.
pub(super) fn repos_for(config: &Config) -> Repos {
    let sandbox = match config.driver {
        DriverKind::Fake => Sandbox::Off,
        DriverKind::Systemd => Sandbox::TransientUnit {
            systemd_run: Repos::find_systemd_run().unwrap_or_else(|| "/usr/bin/systemd-run".into()),
        },
    };
    Repos::new(&config.state_dir, sandbox)
}

impl Hive {
    /// The config a new repo is seeded with: the hive's current limits.
    fn current_agent_config(&self) -> AgentConfig {
        AgentConfig {
            model: None,
            cpu_quota: self.config().agent_cpu_quota.clone(),
            memory_max: self.config().agent_memory_max.clone(),
            tasks_max: None,
            environment: Default::default(),
            egress: Vec::new(),
        }
    }

    /// Seed `name`'s repos ([`Repos::seed`]) and hand the proposed one to
    /// the manager's user.
    async fn seed(
        &self,
        name: &Ident,
        files: &[(String, Vec<u8>)],
        message: &str,
        tag: Option<&str>,
    ) -> Result<String, crate::repos::RepoError> {
        let sha = self.repos().seed(name, files, message, tag).await?;
        self.hand_to_manager(name).await;
        Ok(sha)
    }

    /// Give `name`'s proposed repo, just seeded (the host root's, all of
    /// it), to the manager's user when the manager's container has a user
    /// range (nspawn, a container the daemon made: the range its state
    /// directory records), so the manager commits in it from
    /// `/hive/proposed/<name>`. Otherwise nothing: an installation's own
    /// manager container without a range runs as the host's root. A
    /// failure is logged; the manager's next start hands it over.
    async fn hand_to_manager(&self, name: &Ident) {
        let c = self.config();
        if c.profile != Profile::Nspawn || !nix::unistd::geteuid().is_root() {
            return;
        }
        let Some(base) = userns::recorded(&c.agent_state_dir(&c.manager())) else {
            return;
        };
        let repo = self.repos().proposed(name);
        let done = tokio::task::spawn_blocking(move || handover::hand_over(&repo, base)).await;
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(agent = %name, "{name}: its proposed repo stays root's until the manager's next start: {e}")
            }
            Err(e) => {
                tracing::warn!(agent = %name, "{name}: handing its proposed repo to the manager: {e}")
            }
        }
    }

    /// May `init_config` take `name`? Refused if it has a config repo.
    pub(super) fn check_no_config(&self, name: &Ident) -> Result<(), HiveError> {
        if self.repos().has_any(name) {
            return Err(HiveError::ConfigExists(name.clone()));
        }
        Ok(())
    }

    /// An approved `init_config`: seed `name`'s repos from the template
    /// (one first commit, no container) and tell the manager
    /// (`config_ready`).
    pub(super) async fn init_config(&self, name: &Ident) -> Result<Option<String>, String> {
        let nixos = self.config().profile == Profile::Nixos;
        let files = proposal::template(name, &self.current_agent_config(), nixos);
        let message = format!("Config of {name}, from the template");
        let sha = self
            .seed(name, &files, &message, None)
            .await
            .map_err(|e| e.to_string())?;
        self.mail()
            .to_manager(HelperEvent::ConfigReady {
                agent: name.to_string(),
            })
            .await;
        Ok(Some(format!(
            "config repo seeded: commit {} in /hive/proposed/{name}",
            short(&sha)
        )))
    }

    /// Give every registered agent but the manager that has no config repo
    /// its repos, seeded from the hive's current settings and tagged
    /// `deployed/0` (nothing it runs changes): the upgrade to config
    /// repos. A failure is logged per agent; it must not keep the hive
    /// from starting.
    pub async fn seed_missing_configs(&self) -> Result<(), HiveError> {
        let manager = self.config().manager();
        let records = self.store().read(agents::all).await?;
        for record in records {
            let name = record.name;
            if name == manager {
                continue;
            }
            if self.repos().has_config(&name) {
                if let Err(e) = self.repos().share_applied(&name).await {
                    tracing::warn!(agent = %name, "{name}: cannot make its applied repo readable to the manager: {e}");
                }
                continue;
            }
            if self.repos().has_any(&name) {
                continue;
            }
            self.seed_deployed_zero(&name).await;
        }
        Ok(())
    }

    /// Seed `name`'s repos from the hive's current settings, tagged
    /// `deployed/0` and recorded as deployed (an agent that runs with
    /// them already: one that predates config repos, or one spawned
    /// directly). A failure is logged.
    pub(super) async fn seed_deployed_zero(&self, name: &Ident) {
        // No agent.nix: the agent keeps the system it runs (the build
        // command is given a tree only when it has one).
        let files = proposal::template(name, &self.current_agent_config(), false);
        let message = format!("Config of {name} as it was deployed without a proposal");
        let tag = Tag::Deployed.name(0);
        let seeded = match self.seed(name, &files, &message, Some(&tag)).await {
            Ok(sha) => sha,
            Err(e) => {
                tracing::error!(agent = %name, "{name}: cannot seed its config repos: {e}");
                return;
            }
        };
        tracing::info!(agent = %name, "{name}: config repos seeded from its settings ({}), tagged {tag}", short(&seeded));
        let n = name.clone();
        if let Err(e) = self
            .store()
            .run(move |c| agents::set_deployed(c, &n, &seeded))
            .await
        {
            tracing::error!(agent = %name, "{name}: cannot record its deployed sha: {e}");
        }
    }

    /// Take in an `apply_commit` request (see the module docs): the row,
    /// pending with its `fetched_sha`, or the refusal.
    pub(super) async fn propose(
        &self,
        new: crate::hive::approvals::NewApproval,
    ) -> Result<Queued, HiveError> {
        arguments::check_commit_ref(&new.commit_ref)?;
        let n = new.agent.clone();
        if n == self.config().manager() || !self.repos().has_config(&n) {
            self.require(&n).await?;
            return Err(crate::repos::RepoError::State(format!(
                "agent {n} has no config repo (the manager's own config is not proposed here)"
            ))
            .into());
        }
        self.repos().check_layout(&n)?;
        let sha = self.repos().resolve(&n, &new.commit_ref).await?;
        let (now, manager, cap) = (
            self.now(),
            self.config().manager(),
            self.config().agent_max_pending_approvals,
        );
        let resolved = sha.clone();
        let admitted = self
            .store()
            .run(move |c| admit_row(c, &new, Some(&resolved), true, &manager, cap, now))
            .await?;
        // The same commit proposed again while pending: that row, not fetched twice.
        let row = match admitted {
            Admitted::New(row) => row,
            other => return other.into_queued(),
        };
        let id = row.id;
        let checked = self.fetch_and_check(&n, &sha, id).await;
        let (fetched, outcome) = match checked {
            Ok(()) => (true, Ok(())),
            Err((fetched, why)) => (fetched, Err(why)),
        };
        let (now, manager) = (self.now(), self.config().manager());
        let sha2 = sha.clone();
        match outcome {
            Ok(()) => {
                let row = self
                    .store()
                    .run(move |c| {
                        approvals::set_fetched(c, id, &sha2)?;
                        approvals::unclaim(c, id)?;
                        approvals::get(c, id)?.ok_or_else(|| {
                            crate::store::StoreError::Corrupt(format!("approval {id} vanished"))
                        })
                    })
                    .await?;
                tracing::info!(agent = %n, id, "{n}: proposal {id} fetched as {} and valid", short(&sha));
                Ok(Queued {
                    row,
                    already_pending: false,
                })
            }
            Err(why) => {
                if fetched {
                    let tag = Tag::Failed.name(id);
                    if let Err(e) = self.repos().tag(&n, &tag, &sha, Some(&why)).await {
                        tracing::warn!(agent = %n, "cannot tag {tag}: {e}");
                    }
                }
                let note = why.clone();
                let (row, wakes) = self
                    .store()
                    .run(move |c| {
                        if fetched {
                            approvals::set_fetched(c, id, &sha2)?;
                        }
                        finish_row(c, id, Err(note), &manager, now)
                    })
                    .await?;
                self.mail().wake(wakes);
                tracing::info!(agent = %n, id, "{n}: proposal {id} refused: {why}");
                Err(HiveError::ApprovalFailed {
                    id: row.id,
                    note: why,
                })
            }
        }
    }

    /// A denied config proposal: tag `denied/<id>`, annotated with the
    /// operator's note (logged if it cannot be).
    pub(super) async fn tag_denied(&self, row: &Approval) {
        let (Some(sha), ApprovalKind::ApplyCommit) = (&row.fetched_sha, row.kind) else {
            return;
        };
        let tag = Tag::Denied.name(row.id);
        let note = row.note.as_deref().unwrap_or("denied by the operator");
        if let Err(e) = self.repos().tag(&row.agent, &tag, sha, Some(note)).await {
            tracing::warn!(agent = %row.agent, "cannot tag {tag}: {e}");
        }
    }

    /// Fetch commit `sha` as proposal `id`, tag it and validate it; the
    /// error says whether it was fetched (so tagged) and why it fails.
    async fn fetch_and_check(&self, n: &Ident, sha: &str, id: i64) -> Result<(), (bool, String)> {
        let repos = self.repos();
        repos
            .fetch(n, sha, id)
            .await
            .map_err(|e| (false, format!("fetching the proposal failed: {e}")))?;
        let failed = |e: crate::repos::RepoError| (true, e.to_string());
        repos
            .tag(n, &Tag::Proposal.name(id), sha, None)
            .await
            .map_err(failed)?;
        let entries = repos.tree(n, sha).await.map_err(failed)?;
        proposal::check_tree(&entries).map_err(|e| (true, e.to_string()))?;
        for entry in &entries {
            if entry.kind == EntryKind::Symlink {
                let target = repos.blob(n, &entry.object).await.map_err(failed)?;
                proposal::check_symlink(entry, &target).map_err(|e| (true, e.to_string()))?;
            }
        }
        let json = entries
            .iter()
            .find(|e| e.path == proposal::AGENT_JSON.as_bytes())
            .map(|e| e.object.clone())
            .unwrap_or_default();
        let bytes = repos.blob(n, &json).await.map_err(failed)?;
        AgentConfig::parse(&bytes).map_err(|e| (true, e.to_string()))?;
        if self.config().profile == Profile::Nixos {
            for entry in entries.iter().filter(|e| is_flake_lock(e)) {
                let bytes = repos.blob(n, &entry.object).await.map_err(failed)?;
                flake_lock::check(&entry.shown(), &bytes).map_err(|e| (true, e.to_string()))?;
            }
        }
        if !repos.descends_from_main(n, sha).await.map_err(failed)? {
            return Err((true, proposal::not_on_main(sha).to_string()));
        }
        Ok(())
    }
}

/// A `flake.lock` anywhere in the tree (a file: a symlink was checked to
/// stay inside the tree, and its target is checked as a file itself).
fn is_flake_lock(e: &proposal::TreeEntry) -> bool {
    e.kind != EntryKind::Symlink
        && e.path.rsplit(|b| *b == b'/').next() == Some(flake_lock::FLAKE_LOCK.as_bytes())
}

/// The first 12 hex digits of a sha (the roster's and the notes' form).
pub fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

#[cfg(test)]
#[path = "proposals_tests.rs"]
mod tests;
