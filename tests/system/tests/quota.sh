# shellcheck shell=bash
# Issue 44, the hive's disk: an agent filled the file system its state shares with hive.db and
# 63 of 80 `hivectl send` failed. Each agent's state is held to a project quota set before every
# start (`hive-c0re set-quota`, run by systemd as a transient unit); an agent's shell (isolation.sh's
# probe, as Claude's Bash tool runs) writing past it gets EDQUOT while other agents and the hive's
# database go on, and cannot take its files out of its project.
#
# What this machine's kernel allows decides what is shown: the bed's state directory is a tmpfs
# (no project quota: the hive warns once and runs agents unlimited, or refuses them with
# agent_disk_quota_required), and the agents' directory can be an XFS image loop-mounted into the
# bed. Where the kernel mounts it with prjquota (CONFIG_XFS_QUOTA) the quota is enforced and
# attacked; where it does not, the test says so, checks the daemon calls it unlimited, and still
# attacks the project id from the agent's shell (the refusal is the kernel's, whatever quotas do).

# _q_journal UNIT: UNIT's journal lines of this test.
_q_journal() {
  local args=(-b -u "$1" -o cat --no-pager)
  [ -n "${TB_CURSOR:-}" ] && args+=(--after-cursor="$TB_CURSOR")
  in_c journalctl "${args[@]}"
}

# _q_xfs: an XFS image (300 MiB, sparse) on the bed's /var/lib/hyperhive/agents, mounted with
# prjquota where the kernel takes it; sets TB_Q_ENFORCED=1 then. Unmounted by _q_cleanup, the
# EXIT trap (set again after tb_agents, which sets its own).
_q_xfs() {
  command -v mkfs.xfs >/dev/null || { echo "  mkfs.xfs is missing (xfsprogs)"; return 1; }
  truncate -s 300M "$TB_DIR/agents-xfs.img"
  mkfs.xfs -q -f "$TB_DIR/agents-xfs.img"
  TB_Q_LOOP=$(losetup -f --show "$TB_DIR/agents-xfs.img")
  trap '_q_cleanup' EXIT
  local minor=${TB_Q_LOOP#/dev/loop}
  # The bed's /dev has no loop devices: a node of its own for the mount, made from outside
  # (in /dev: the bed's /run is nodev).
  in_c sh -c "rm -f /dev/tb-agents-xfs && mknod /dev/tb-agents-xfs b 7 $minor"
  in_c mkdir -p /var/lib/hyperhive/agents
  TB_Q_ENFORCED=0
  if in_c mount -t xfs -o prjquota /dev/tb-agents-xfs /var/lib/hyperhive/agents 2>/dev/null; then
    TB_Q_ENFORCED=1
  else
    in_c mount -t xfs /dev/tb-agents-xfs /var/lib/hyperhive/agents
  fi
}
_q_cleanup() {
  tb_forget_agents
  in_c umount /var/lib/hyperhive/agents 2>/dev/null || true
  in_c rm -f /dev/tb-agents-xfs
  [ -n "${TB_Q_LOOP:-}" ] && losetup -d "$TB_Q_LOOP" 2>/dev/null
  rm -f "$TB_DIR/agents-xfs.img"
  return 0
}

a_hive_without_project_quota_warns_once_and_runs_its_agents_unlimited() {
  _iso_hive qfree
  # The bed's state directory is a tmpfs.
  local hive
  hive=$(_q_journal "$TB_UNIT")
  expect_match "the start-up warning" \
    'agents.* state in /var/lib/hyperhive/agents is on a file system without project quota \(tmpfs has no project quota\).*unlimited' \
    "$hive"
  expect_eq "start-up warnings about project quota" 1 \
    "$(grep -c "state in /var/lib/hyperhive/agents is on a file system without project quota" <<<"$hive")"
  expect_match "qfree's start" 'qfree: disk unlimited: its state directory is on a file system without project quota' "$hive"
  expect_eq "qfree's row" running "$(tb_row qfree)"
}

with_agent_disk_quota_required_an_agent_without_project_quota_is_not_started() {
  TB_ISO_CONFIG='"agent_disk_quota_required": true'
  _iso_template
  tb_hive "{\"stop_deadline_secs\": 2, \"template_image\": \"hive-iso-template\", $TB_ISO_CONFIG}"
  tb_agents qreq
  local out rc=0
  out=$(hivectl_root --json spawn qreq 2>&1) || rc=$?
  echo "  spawn: rc $rc: $out"
  expect_match "the spawn's answer" 'no_disk_quota|agent_disk_quota_required is set' "$out"
  expect_ne "the spawn's exit status" 0 "$rc"
  expect_ne "qreq's container" "active running" "$(tb_agent_unit qreq)"
  expect_match "the start-up warning" 'agent_disk_quota_required is set, so no agent will start' \
    "$(_q_journal "$TB_UNIT")"
}

# shellcheck disable=SC2016  # the probe's $ are the agent's
an_agent_cannot_fill_its_quota_past_its_limit_nor_leave_its_project() {
  _q_xfs
  TB_ISO_CONFIG='"agent_disk_quota": "64M"'
  _iso_hive qfill qother
  trap '_q_cleanup' EXIT
  local state=/var/lib/hyperhive/agents/qfill base out
  base=$(in_c stat -c %u "$state"); base=$(( base & ~0xffff ))
  if [ "$TB_Q_ENFORCED" = 1 ]; then
    expect_eq "qfill's project (its range's base) and PROJINHERIT" "$base P" \
      "$(in_c lsattr -pd "$state" | awk '{print $1, ($2 ~ /P/ ? "P" : "-")}')"
  else
    echo "figure: disk quota only configured: this kernel mounts no XFS with prjquota (no CONFIG_XFS_QUOTA); qfill runs unlimited"
    expect_match "qfill's start" 'qfill: disk unlimited: .*xfs mounted without prjquota' \
      "$(_q_journal "$TB_UNIT")"
    # The project id the kernel keeps whatever quotas do: set from the bed (the host's
    # user namespace), as the helper does.
    in_c chattr -R -p "$base" "$state"
    in_c chattr +P "$state"
  fi
  # From qfill's shell: fill past 64 MiB, then try to leave the project.
  out=$(_iso_probe qfill '
dd if=/dev/zero of=/var/lib/hive/fill bs=1M count=100 2>&1 | tail -1
echo "dd: $?"
echo x > /var/lib/hive/mine
chattr -p 0 /var/lib/hive/mine 2>&1 && echo "chattr -p: changed"
chattr -P /var/lib/hive 2>&1 && echo "chattr -P: changed"
lsattr -pd /var/lib/hive/mine /var/lib/hive 2>&1')
  echo "$out" | sed 's/^/  /'
  expect_match "chattr -p from qfill's shell" 'Invalid argument while setting project' "$out"
  expect_match "chattr -P from qfill's shell" 'Invalid argument while setting flags' "$out"
  if grep -q 'changed' <<<"$out"; then echo "  qfill changed a project id or flag"; return 1; fi
  expect_eq "qfill's file's project" "$base" "$(in_c lsattr -pd "$state/mine" | awk '{print $1}')"
  if [ "$TB_Q_ENFORCED" = 1 ]; then
    expect_match "qfill's dd past its quota" 'Disk quota exceeded|No space left' "$out"
    # The hive and the other agents go on.
    local i sent=0
    for i in $(seq 20); do hivectl_root send qother "after-fill-$i" >/dev/null && sent=$((sent + 1)); done
    expect_eq "sends to qother after qfill filled its quota" 20 "$sent"
    echo "figure: qfill wrote $(in_c du -sm "$state/fill" | cut -f1) MiB of 100 under a 64M quota"
  else
    echo "figure: qfill's 100 MiB were written ($(in_c du -sm "$state/fill" | cut -f1) MiB): nothing enforces the quota on this kernel"
  fi
}
