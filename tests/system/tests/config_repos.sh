# shellcheck shell=bash
# Config as code under a real systemd (issue 28): the manager commits a change of agent.json's
# memory limit and CLAUDE.md; the hive fetches it with the upload side as a transient unit
# (DynamicUser, only that repo bound); approved, the container restarts with the new
# MemoryMax= and the new CLAUDE.md in its working directory; rollback returns to deployed/0.
# The first test plays the manager from the bed (a client of the manager socket, and git in the
# proposed repo as root); the second runs the manager's side in a manager container the daemon
# made, as its user `agent`: /hive/proposed/N is its to commit in, /hive/applied/N.git read-only.

# shellcheck source=../agent_image.sh
source "$HERE/agent_image.sh"

# _cr_manager REQUEST-JSON: one request on the manager socket, from the bed; the answer line.
_cr_manager() {
  in_c timeout 30 "$TB_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect("/run/hyperhive/manager/mcp.sock")
f = s.makefile("rwb")
f.write(sys.argv[1].encode() + b"\n")
f.flush()
sys.stdout.write(f.readline().decode())' "$1"
}
# _cr_git REPO ARGS...: git in the bed as the manager runs it in its repo (as root, in a repo
# that may belong to the manager's user range if an earlier test gave the manager one).
_cr_git() {
  local r=$1; shift
  in_c git -C "$r" -c safe.directory='*' -c user.name=ruth -c user.email=ruth@hive "$@"
}
_cr_last_approval() {
  hivectl_root --json pending --all | "$TB_PYTHON" -c 'import json, sys
print(max(a["id"] for a in json.load(sys.stdin).get("approvals") or []))'
}
# _cr_deploy_key NAME KEY JSON: agent NAME's agent.json gains KEY: JSON, committed in its
# proposed repo, asked for on the manager socket and approved; waits until it is deployed.
_cr_deploy_key() {
  local n=$1 repo=/var/lib/hyperhive/proposed/$1 sha id out
  in_c "$TB_PYTHON" -c 'import json, sys
p = sys.argv[1] + "/agent.json"
c = json.load(open(p)); c[sys.argv[2]] = json.loads(sys.argv[3])
open(p, "w").write(json.dumps(c, indent=2) + "\n")' "$repo" "$2" "$3"
  _cr_git "$repo" commit -q -am "$n: $2"
  sha=$(_cr_git "$repo" rev-parse HEAD)
  out=$(_cr_manager "{\"cmd\":\"request_apply_commit\",\"agent\":\"$n\",\"commit_ref\":\"$sha\"}")
  expect_match "request_apply_commit's answer" '^\{"kind":"ok","approval":[0-9]+\}$' "$out"
  id=$(_cr_last_approval)
  hivectl_root approve "$id" >/dev/null 2>&1 || true
  wait_for 120 "approval $id to end approved" tb_approval_is "$id" approved ||
    { hivectl_root --json pending --all; return 1; }
}
_cr_memory() { unit_prop "systemd-nspawn@h-$1.service" MemoryMax; }
_cr_memory_is() { [ "$(_cr_memory "$1")" = "$2" ]; }

an_approved_commit_restarts_the_container_with_its_memory_limit_and_claude_md_and_rolls_back() {
  tb_hive; tb_agents cfg
  tb_spawn cfg
  local repo=/var/lib/hyperhive/proposed/cfg id sha out since
  expect_eq "MemoryMax of the seeded config (4G)" 4294967296 "$(_cr_memory cfg)"
  in_c test -d "$repo/.git"
  in_c sh -c "printf '{\"memory_max\": \"1G\"}\n' > $repo/agent.json"
  in_c sh -c "printf 'You are cfg. Be brief.\n' > $repo/CLAUDE.md"
  _cr_git "$repo" commit -q -am "cfg: 1G and a brief CLAUDE.md"
  sha=$(_cr_git "$repo" rev-parse HEAD)
  since=$(in_c date '+%Y-%m-%d %H:%M:%S')
  out=$(_cr_manager "{\"cmd\":\"request_apply_commit\",\"agent\":\"cfg\",\"commit_ref\":\"${sha:0:10}\"}")
  expect_match "request_apply_commit's answer" '^\{"kind":"ok","approval":[0-9]+\}$' "$out"
  # The upload side ran as a transient unit with a dynamic user.
  expect_match "a transient unit ran git upload-pack" "upload-pack" \
    "$(in_c journalctl --since "$since" -o cat --no-pager _PID=1 | grep -i 'run-' || true)"
  id=$(_cr_last_approval)
  expect_match "hivectl show $id" "CLAUDE.md" "$(hivectl_root show "$id")"
  hivectl_root approve "$id" >/dev/null 2>&1 || true
  wait_for 60 "approval $id to end approved" tb_approval_is "$id" approved
  wait_for 30 "h-cfg's MemoryMax to be 1G" _cr_memory_is cfg 1073741824
  tb_wait_machine 30 h-cfg
  expect_eq "CLAUDE.md in h-cfg's working directory" "You are cfg. Be brief." \
    "$(in_c cat /var/lib/hyperhive/agents/cfg/CLAUDE.md)"
  expect_match "deployed_sha in hivectl status" "${sha:0:12}" "$(hivectl_root --json status)"
  # What the daemon wrote in the applied repo (UMask=0077) stays readable to
  # the manager's user through a read-only bind: nothing others cannot read.
  expect_eq "files of applied/cfg.git others cannot read" "" \
    "$(in_c find /var/lib/hyperhive/applied/cfg.git \( -type f ! -perm -o=r \) -o \( -type d ! -perm -o=rx \))"
  hivectl_root rollback cfg 0 >/dev/null 2>&1 || true
  wait_for 60 "h-cfg's MemoryMax back to 4G" _cr_memory_is cfg 4294967296
  tb_wait_machine 30 h-cfg
}

# _cr_in_ruth SCRIPT: SCRIPT in the manager's container h-ruth as its user `agent`, from its
# own systemd (a login's environment: HOME=/var/lib/hive); its output and status.
_cr_in_ruth() {
  in_c timeout 30 systemd-run -q -M h-ruth --wait --pipe -p User=agent /bin/sh -c "$1" 2>&1
}
# _cr_manager_template: a template with the harness (so the user `agent` and the image's
# /etc/gitconfig of systemd/image/install-agent) and a stand-in Claude that only reads its
# prompt: the manager's inbox gets events during the test.
_cr_manager_template() {
  tb_stand_in_template hive-cr-template <<'SH'
#!/bin/sh
cat > /dev/null
SH
}

# shellcheck disable=SC2016  # $(...) in the scripts run in h-ruth
the_manager_commits_in_its_containers_hive_proposed_as_its_user_and_cannot_write_hive_applied() {
  _cr_manager_template
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-cr-template"}'
  tb_agents crm
  # shellcheck disable=SC2034  # read by tb_agents' EXIT trap: h-ruth goes too
  TB_MANAGER_CONTAINER=1
  # No h-ruth on this host: the daemon makes it (image and settings) at start.
  in_c rm -f /etc/systemd/nspawn/h-ruth.nspawn
  hivectl_root start ruth >/dev/null
  tb_wait_machine 30 h-ruth
  local nspawn out sha applied id
  nspawn=$(in_c cat /etc/systemd/nspawn/h-ruth.nspawn)
  expect_match "h-ruth.nspawn binds the proposed repos read-write" \
    "Bind=/var/lib/hyperhive/proposed:/hive/proposed" "$nspawn"
  expect_match "h-ruth.nspawn binds the applied repos read-only" \
    "BindReadOnly=/var/lib/hyperhive/applied:/hive/applied" "$nspawn"
  # A manager container an older daemon made (its file without the binds)
  # gets them at a plain start, not only at `hivectl rebuild ruth`.
  hivectl_root stop ruth >/dev/null
  in_c sed -i '\#:/hive/#d' /etc/systemd/nspawn/h-ruth.nspawn
  expect_eq "h-ruth.nspawn made old: no repo binds" "0" \
    "$(in_c grep -c ':/hive/' /etc/systemd/nspawn/h-ruth.nspawn || true)"
  hivectl_root start ruth >/dev/null
  tb_wait_machine 30 h-ruth
  nspawn=$(in_c cat /etc/systemd/nspawn/h-ruth.nspawn)
  expect_match "a plain start gives the old h-ruth.nspawn its proposed bind" \
    "Bind=/var/lib/hyperhive/proposed:/hive/proposed" "$nspawn"
  expect_match "a plain start gives the old h-ruth.nspawn its applied bind" \
    "BindReadOnly=/var/lib/hyperhive/applied:/hive/applied" "$nspawn"
  # Seeded while the manager runs: handed to its user at once.
  tb_spawn crm
  expect_eq "h-ruth's agent and the owners of crm's repos there (the host's root: overflow)" \
    "agent 1000 65534" \
    "$(_cr_in_ruth 'echo $(id -un) $(stat -c %u /hive/proposed/crm /hive/applied/crm.git)')"
  expect_eq "files in /hive/proposed/crm not the manager's" "" \
    "$(_cr_in_ruth 'find /hive/proposed/crm ! -uid 1000')"
  out=$(_cr_in_ruth 'cd /hive/proposed/crm &&
    printf "{\"memory_max\": \"1G\"}\n" > agent.json &&
    printf "You are crm. Be brief.\n" > CLAUDE.md &&
    git -c user.name=ruth -c user.email=ruth@hive commit -q -am "crm: 1G, brief" &&
    git rev-parse HEAD') || { echo "commit in h-ruth failed: $out"; return 1; }
  sha=$out
  expect_eq "the commit made in h-ruth, seen from the bed" "$sha" \
    "$(_cr_git /var/lib/hyperhive/proposed/crm rev-parse HEAD)"
  # The applied repo: readable with git (safe.directory), not writable.
  applied=$(in_c git --git-dir=/var/lib/hyperhive/applied/crm.git rev-parse main)
  expect_eq "main of /hive/applied/crm.git read in h-ruth" "$applied" \
    "$(_cr_in_ruth 'git -C /hive/applied/crm.git rev-parse main')"
  _cr_in_ruth 'git -C /hive/proposed/crm fetch -q origin' >/dev/null
  if out=$(_cr_in_ruth 'touch /hive/applied/crm.git/planted'); then
    echo "h-ruth's agent wrote into /hive/applied/crm.git"; return 1
  fi
  expect_match "why writing /hive/applied fails" "Read-only file system" "$out"
  if out=$(_cr_in_ruth 'git -C /hive/proposed/crm push -q origin HEAD:refs/heads/main'); then
    echo "h-ruth's agent pushed into /hive/applied/crm.git: $out"; return 1
  fi
  expect_eq "applied main after the refused push" "$applied" \
    "$(in_c git --git-dir=/var/lib/hyperhive/applied/crm.git rev-parse main)"
  # Another agent sees no repos at all.
  expect_eq "/hive in h-crm" "absent" \
    "$(in_c timeout 30 systemd-run -q -M h-crm --wait --pipe sh -c 'test -e /hive || echo absent')"
  # The commit made inside goes the whole way.
  out=$(_cr_manager "{\"cmd\":\"request_apply_commit\",\"agent\":\"crm\",\"commit_ref\":\"$sha\"}")
  expect_match "request_apply_commit's answer" '^\{"kind":"ok","approval":[0-9]+\}$' "$out"
  id=$(_cr_last_approval)
  hivectl_root approve "$id" >/dev/null 2>&1 || true
  wait_for 60 "approval $id to end approved" tb_approval_is "$id" approved
  wait_for 30 "h-crm's MemoryMax to be 1G" _cr_memory_is crm 1073741824
  expect_eq "CLAUDE.md in h-crm's working directory" "You are crm. Be brief." \
    "$(in_c cat /var/lib/hyperhive/agents/crm/CLAUDE.md)"
  expect_eq "main of /hive/applied/crm.git in h-ruth after the deploy" "$sha" \
    "$(_cr_in_ruth 'git -C /hive/applied/crm.git rev-parse main')"
}
