# shellcheck shell=bash
# Config as code under a real systemd (issue 28): the manager (here: a client of the manager
# socket in the bed, and git in the proposed repo as the manager would run it) commits a
# change of agent.json's memory limit and CLAUDE.md; the hive fetches it with the upload side
# as a transient unit (DynamicUser, only that repo bound); approved, the container restarts
# with the new MemoryMax= and the new CLAUDE.md in its working directory; rollback returns
# to deployed/0. The manager's container is not used: the binds of the repos into it
# (/hive/proposed/N, /hive/applied/N.git) are not made yet (README, Limitations).

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
# _cr_git REPO ARGS...: git in the bed as the manager runs it in its repo.
_cr_git() { local r=$1; shift; in_c git -C "$r" -c user.name=ruth -c user.email=ruth@hive "$@"; }
_cr_last_approval() {
  hivectl_root --json pending --all | "$TB_PYTHON" -c 'import json, sys
print(max(a["id"] for a in json.load(sys.stdin).get("approvals") or []))'
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
  expect_eq "request_apply_commit's answer" '{"kind":"ok"}' "$out"
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
