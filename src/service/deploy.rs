//! An approved `apply_commit` built, switched to and recorded, in the
//! hive's one build queue (`Hive::build_queue`: one deploy, rebuild, spawn
//! or restart at a time):
//! tag `approved/<id>` and `building/<id>`; export the fetched commit's
//! tree into a hive-owned directory (never the proposed repo); switch the
//! container to it — stop it, install `CLAUDE.md` and `.claude/` into the
//! agent's working directory, re-render its settings and limits from
//! `agent.json` (the driver's `rebuild`), start it; or, the first time (an
//! agent made by `init_config`), create its container from it; then tag
//! `deployed/<id>`, fast-forward `main`, record `deployed_sha`, and tell the
//! manager (`rebuilt{ok, sha, tag}`, or the spawn's `spawned{ok, sha}`).
//!
//! `rebuild` (the manager's `update`, `hivectl rebuild`) switches the
//! container to its deployed config again, against the hive's current
//! base, in the same queue.
//!
//! On failure: tag `failed/<id>` annotated with the error, `main` and the
//! deployed tree unchanged, the container put back on its old config,
//! `rebuilt{ok: false, note}`.
//!
//! Decision: `deployed/<id>` is the commit point. A daemon killed before it
//! ends the row `failed` at start (nothing was recorded; the container may
//! run the new files until its next rebuild), after it `approved` (the
//! record is finished then): [`Hive::finish_interrupted_deploy`].

use std::path::Path;

use super::budget::within_budget;
use super::claude_files::install_off_reactor;
use super::deployed::apply_config;
use super::proposals::short;
use super::{Hive, HiveError};
use crate::containers::{ContainerSpec, Outcome, StopMode};
use crate::hive::proposal::{AGENT_JSON, AgentConfig, Tag, not_on_main};
use crate::store::agents;
use crate::wire::events::HelperEvent;
use crate::wire::host::Approval;
use crate::wire::ident::Ident;

/// What a deploy did, for its note and events.
struct Deployed {
    /// The container was made now (the agent's first config).
    first: bool,
}

impl Hive {
    /// Run an approved `apply_commit` (see the module docs): `Ok` with the
    /// row's note, or the error that becomes it.
    pub(super) async fn deploy_approved(&self, row: &Approval) -> Result<Option<String>, String> {
        let Some(sha) = row.fetched_sha.clone() else {
            return Err("the proposal was never fetched: request again".into());
        };
        let (n, id) = (&row.agent, row.id);
        let _queue = self.build_queue().await;
        match self.deploy(n, id, &sha).await {
            Ok(done) => {
                let tag = Tag::Deployed.name(id);
                if !done.first {
                    self.mail()
                        .to_manager(HelperEvent::Rebuilt {
                            agent: n.to_string(),
                            ok: true,
                            note: None,
                            sha: Some(sha.clone()),
                            tag: Some(tag.clone()),
                        })
                        .await;
                }
                tracing::info!(agent = %n, id, "{n}: deployed {} ({tag})", short(&sha));
                Ok(Some(format!("deployed {} ({tag})", short(&sha))))
            }
            Err((first, why)) => {
                let tag = Tag::Failed.name(id);
                if let Err(e) = self.repos().tag(n, &tag, &sha, Some(&why)).await {
                    tracing::warn!(agent = %n, "{n}: cannot tag {tag}: {e}");
                }
                if !first {
                    self.mail()
                        .to_manager(HelperEvent::Rebuilt {
                            agent: n.to_string(),
                            ok: false,
                            note: Some(why.clone()),
                            sha: Some(sha.clone()),
                            tag: Some(tag),
                        })
                        .await;
                }
                tracing::warn!(agent = %n, id, "{n}: deploy of {} failed: {why}", short(&sha));
                Err(why)
            }
        }
    }

    /// Build and switch; the error says whether it was a first deploy.
    async fn deploy(&self, n: &Ident, id: i64, sha: &str) -> Result<Deployed, (bool, String)> {
        let repos = self.repos();
        let registered = self
            .store()
            .read({
                let n = n.clone();
                move |c| agents::get(c, &n)
            })
            .await
            .map_err(|e| (false, e.to_string()))?
            .is_some();
        let first = !registered;
        let fail = |e: String| (first, e);
        for tag in [Tag::Approved, Tag::Building] {
            repos
                .tag(n, &tag.name(id), sha, None)
                .await
                .map_err(|e| fail(e.to_string()))?;
        }
        let old_main = repos
            .rev(n, "refs/heads/main")
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !repos
            .descends_from_main(n, sha)
            .await
            .map_err(|e| fail(e.to_string()))?
        {
            return Err(fail(format!(
                "main moved since the proposal: {}",
                not_on_main(sha)
            )));
        }
        let build = self
            .config()
            .state_dir
            .join("build")
            .join(format!("{n}-{id}"));
        let _ = std::fs::remove_dir_all(&build);
        let built = self.build(n, sha, &build).await;
        let config = match built {
            Ok(config) => config,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&build);
                return Err(fail(e));
            }
        };
        let switched = if first {
            self.first_deploy(n, sha, &build).await
        } else {
            self.switch(n, sha, &build, &config).await
        };
        let _ = std::fs::remove_dir_all(&build);
        switched.map_err(fail)?;
        // The commit point: everything after it is redone at start if cut.
        repos
            .tag(n, &Tag::Deployed.name(id), sha, None)
            .await
            .map_err(|e| fail(e.to_string()))?;
        self.record_deployed(n, sha, Some(&old_main))
            .await
            .map_err(|e| fail(e.to_string()))?;
        Ok(Deployed { first })
    }

    /// Export `sha` into `build` and read its `agent.json`.
    async fn build(&self, n: &Ident, sha: &str, build: &Path) -> Result<AgentConfig, String> {
        self.repos()
            .export(n, sha, build)
            .await
            .map_err(|e| format!("exporting the tree failed: {e}"))?;
        let bytes = std::fs::read(build.join(AGENT_JSON))
            .map_err(|e| format!("cannot read {AGENT_JSON}: {e}"))?;
        AgentConfig::parse(&bytes).map_err(|e| e.to_string())
    }

    /// Switch a running agent to the tree in `build`: stop, install, rebuild,
    /// start, then make it the deployed tree. On failure the old tree is
    /// installed and rebuilt again and the container started.
    async fn switch(
        &self,
        n: &Ident,
        sha: &str,
        build: &Path,
        config: &AgentConfig,
    ) -> Result<(), String> {
        let mut spec = self.spec_without_deployed(n).await?;
        apply_config(&mut spec, config);
        // Built before the container is touched: a failed build changes nothing.
        spec.system = self.build_system(n, build, sha).await?;
        match self.switch_to(n, build, &spec, true).await {
            Ok(()) => self.promote(n, sha, build),
            Err(why) => {
                let why = why.to_string();
                let old_tree = self.deployed_tree(n);
                let old_spec = self.built_spec(n).await;
                let put_back = match old_spec {
                    Ok(old_spec) => self.switch_to(n, &old_tree, &old_spec, true).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = put_back {
                    tracing::error!(agent = %n, "{n}: cannot put the old config back: {e}");
                }
                Err(why)
            }
        }
    }

    /// The spec `n` gets from the hive alone (its grants, the defaults).
    async fn spec_without_deployed(&self, n: &Ident) -> Result<ContainerSpec, String> {
        let caps = self.capabilities(n).await.map_err(|e| e.to_string())?;
        let groups = self.tool_groups(n).await.map_err(|e| e.to_string())?;
        Ok(self.spec(n, &caps, &groups))
    }

    /// Rebuild `name` from its deployed config against the hive's current
    /// base (its grants, the hive's defaults under its `agent.json`) and
    /// restart it: stopped, its Claude files installed again, its settings
    /// and limits re-rendered, started (`update`, `hivectl rebuild`). In
    /// the build queue, within the answer budget; the manager hears
    /// `rebuilt{ok}`.
    pub async fn rebuild(&self, name: &Ident) -> Result<(), HiveError> {
        self.require(name).await?;
        let (hive, n) = (self.clone(), name.clone());
        within_budget("rebuild", vec![name.to_string()], async move {
            hive.rebuild_now(&n, true).await
        })
        .await?
    }

    /// The rebuild, however long it takes; `start`: start the container
    /// afterwards even if it was not running.
    pub(super) async fn rebuild_now(&self, n: &Ident, start: bool) -> Result<(), HiveError> {
        let _queue = self.build_queue().await;
        let spec = self.built_spec(n).await?;
        let start = start || self.driver().state(n).is_some_and(|u| u.is_running());
        let result = self
            .switch_to(n, &self.deployed_tree(n), &spec, start)
            .await;
        let sha = self.require(n).await.ok().and_then(|r| r.deployed_sha);
        self.mail()
            .to_manager(HelperEvent::Rebuilt {
                agent: n.to_string(),
                ok: result.is_ok(),
                note: result.as_ref().err().map(ToString::to_string),
                sha,
                tag: None,
            })
            .await;
        result
    }

    /// Stop `n`, install `tree`'s Claude files, rebuild with `spec` (and
    /// record it: `base`), and `start` it again. A stop that has not ended
    /// ([`Outcome::Pending`]) ends it here: [`HiveError::StillRunning`],
    /// nothing installed (the agent's processes may still be alive).
    async fn switch_to(
        &self,
        n: &Ident,
        tree: &Path,
        spec: &ContainerSpec,
        start: bool,
    ) -> Result<(), HiveError> {
        let driver_err = |e: crate::containers::DriverError| HiveError::Driver {
            agent: n.clone(),
            error: e,
        };
        self.mark_going_down(n);
        let deadline = self.config().stop_deadline();
        let stopped = self
            .driver()
            .stop(n, StopMode::Graceful { deadline })
            .await
            .map_err(driver_err)?;
        match stopped {
            Outcome::Done | Outcome::AlreadyInState => {}
            // The stop goes on past the driver's wait (or its bus went
            // away): the agent's processes may still run and write its
            // state directory, so nothing is installed into it; the
            // caller hears "still in progress" (the roster shows the end).
            Outcome::Pending => {
                return Err(HiveError::StillRunning {
                    verb: "stop",
                    agents: vec![n.to_string()],
                });
            }
        }
        if tree.exists() {
            install_off_reactor(tree, &spec.state_dir).await?;
        }
        self.driver().rebuild(n, spec).await.map_err(driver_err)?;
        self.built(n, spec).await;
        if start {
            self.driver().start(n).await.map_err(driver_err)?;
        }
        self.publish(n).await;
        Ok(())
    }

    /// An agent made by `init_config` gets its container from its first
    /// approved commit: the tree becomes the deployed one, its Claude files
    /// are installed, then the spawn (which reads the deployed config).
    async fn first_deploy(&self, n: &Ident, sha: &str, build: &Path) -> Result<(), String> {
        self.promote(n, sha, build)?;
        let state = self.config().agent_state_dir(n);
        let installed = install_off_reactor(&self.deployed_tree(n), &state).await;
        let spawned = match installed {
            Ok(()) => self.spawn_queued(n, false).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        if spawned.is_err() {
            let _ = std::fs::remove_dir_all(self.deployed_dir(n));
        }
        spawned
    }

    /// Make `build` the deployed tree of `n` (replacing the old one) and
    /// write its sha.
    fn promote(&self, n: &Ident, sha: &str, build: &Path) -> Result<(), String> {
        let dir = self.deployed_dir(n);
        let tree = self.deployed_tree(n);
        let old = dir.join("tree.old");
        let io = |e: std::io::Error| format!("cannot install the deployed tree: {e}");
        std::fs::create_dir_all(&dir).map_err(io)?;
        let _ = std::fs::remove_dir_all(&old);
        if tree.exists() {
            std::fs::rename(&tree, &old).map_err(io)?;
        }
        std::fs::rename(build, &tree).map_err(io)?;
        let _ = std::fs::remove_dir_all(&old);
        std::fs::write(dir.join("sha"), format!("{sha}\n")).map_err(io)
    }

    /// Fast-forward `main` to `sha` (from `old`, when known) and record
    /// `deployed_sha`, showing it on the roster.
    async fn record_deployed(
        &self,
        n: &Ident,
        sha: &str,
        old: Option<&str>,
    ) -> Result<(), HiveError> {
        let main = self.repos().rev(n, "refs/heads/main").await?;
        if main != sha {
            let old = old.unwrap_or(&main);
            self.repos().set_main(n, sha, old).await?;
        }
        let (name, sha2) = (n.clone(), sha.to_owned());
        self.store()
            .run(move |c| agents::set_deployed(c, &name, &sha2))
            .await?;
        self.publish(n).await;
        Ok(())
    }

    /// Roll `name` back to its config at `deployed/<id>` (operator only, no
    /// approval): a new commit on `main` with that tree, deployed as an
    /// `apply_commit` row of its own, approved by the operator, noted
    /// `rollback to deployed/<id>`, so it has its own tags and stays in the
    /// audit trail. Within the answer budget; the row as it ended.
    pub async fn rollback(&self, name: &Ident, id: i64) -> Result<Approval, HiveError> {
        self.require(name).await?;
        let target = Tag::Deployed.name(id);
        if !self.repos().has_config(name) || !self.repos().has_tag(name, &target).await? {
            return Err(crate::repos::RepoError::State(format!(
                "agent {name} has no {target} to roll back to (see its applied repo's tags)"
            ))
            .into());
        }
        let message = format!("Rollback to {target}");
        let sha = self.repos().commit_tree_of(name, &target, &message).await?;
        let note = format!("rollback to {target}");
        let (n, now, sha2, note2) = (name.clone(), self.now(), sha.clone(), note.clone());
        let row = self
            .store()
            .run(move |c| {
                let new = crate::hive::approvals::NewApproval {
                    agent: n,
                    kind: crate::wire::host::ApprovalKind::ApplyCommit,
                    commit_ref: sha2.clone(),
                    description: Some(note2),
                };
                let row = crate::store::approvals::insert(c, &new, now)?;
                crate::store::approvals::claim(c, row.id)?;
                crate::store::approvals::set_fetched(c, row.id, &sha2)?;
                crate::store::approvals::get(c, row.id)?.ok_or_else(|| {
                    crate::store::StoreError::Corrupt(format!("approval {} vanished", row.id))
                })
            })
            .await?;
        self.repos()
            .tag(name, &Tag::Proposal.name(row.id), &sha, None)
            .await?;
        let hive = self.clone();
        let row_id = row.id;
        let ended = within_budget("rollback", vec![name.to_string()], async move {
            let action = hive
                .deploy_approved(&row)
                .await
                .map(|done| Some(format!("{note}; {}", done.unwrap_or_default())));
            let (now, manager) = (hive.now(), hive.config().manager());
            let (row, wakes) = hive
                .store()
                .run(move |c| super::approvals::finish_row(c, row_id, action, &manager, now))
                .await?;
            hive.mail().wake(wakes);
            Ok::<_, HiveError>(row)
        })
        .await??;
        match (&ended.status, &ended.note) {
            (crate::wire::host::ApprovalStatus::Failed, Some(note)) => {
                Err(HiveError::ApprovalFailed {
                    id: ended.id,
                    note: note.clone(),
                })
            }
            _ => Ok(ended),
        }
    }

    /// An `apply_commit` a previous daemon was deploying when it died: was
    /// `deployed/<id>` tagged? Then the record is finished now and the row
    /// ends approved; else it ends failed (`failed/<id>` tagged).
    pub(super) async fn finish_interrupted_deploy(&self, row: &Approval) -> Result<bool, String> {
        let Some(sha) = row.fetched_sha.as_deref() else {
            return Ok(false);
        };
        let n = &row.agent;
        let deployed = Tag::Deployed.name(row.id);
        let tagged = self
            .repos()
            .has_tag(n, &deployed)
            .await
            .map_err(|e| e.to_string())?;
        if tagged {
            self.record_deployed(n, sha, None)
                .await
                .map_err(|e| e.to_string())?;
        } else {
            let failed = Tag::Failed.name(row.id);
            let note = "hive-c0re stopped while the commit was being deployed";
            if let Err(e) = self.repos().tag(n, &failed, sha, Some(note)).await {
                tracing::warn!(agent = %n, "{n}: cannot tag {failed}: {e}");
            }
        }
        Ok(tagged)
    }
}

#[cfg(test)]
#[path = "deploy_tests.rs"]
mod tests;
