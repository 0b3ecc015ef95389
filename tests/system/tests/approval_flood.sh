# shellcheck shell=bash
# Issue 44, attacked from where the attacker sits: one agent's shell (a child of its
# `hive-agent run`, as Claude's Bash tool runs) floods the approval queue through its own
# socket — 1,000 identical `request_egress`, then one per new host — and another agent asks
# for one host. Before: 1,100 rows in 0.4 s, and the flood filled `notify_command`'s queue so
# the other agent's approval never reached the operator. The stand-in template with the probe
# hook is prompt_fence.sh's (`_fence_template`; every test file is sourced before any runs).

_flood_db() {
  in_c "$TB_PYTHON" -c "import sqlite3, sys
c = sqlite3.connect('file:/var/lib/hyperhive/hive.db?mode=ro', uri=True)
print(c.execute(sys.argv[1], sys.argv[2:]).fetchone()[0])" "$@"
}

_flood_notified() { in_c grep -qF -- "$1" /var/lib/hyperhive/tb-notify.log; }

# _flood_turn NAME SCRIPT: run SCRIPT in NAME's shell during one turn; its output.
_flood_turn() {
  local n=$1 state=/var/lib/hyperhive/agents/$1 word="go-$RANDOM$RANDOM"
  printf '%s\n' "$2" | in_c sh -c "cat > $state/probe.sh"
  hivectl_root send "$n" "$word" >/dev/null
  wait_for 120 "$n's turn" _fence_inbox_has "got: $word" ||
    { in_c journalctl -M "h-$n" -u hive-agent --no-pager -n 30; return 1; }
  in_c cat "$state/probe.out"
}

# shellcheck disable=SC2016  # the probes' $ are the agent's
a_thousand_identical_requests_from_an_agents_shell_leave_one_row_and_another_agents_approval_is_notified() {
  _fence_template
  in_c rm -f /var/lib/hyperhive/tb-notify.log
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-fence-template",
    "notify_command": ["tee", "-a", "/var/lib/hyperhive/tb-notify.log"]}'
  tb_agents spammer bystander
  local n out
  for n in spammer bystander; do
    tb_spawn "$n"
    tb_wait_machine 30 "h-$n" hive-agent.service ||
      { in_c journalctl -M "h-$n" -u hive-agent --no-pager -n 30; return 1; }
  done
  out=$(_flood_turn spammer '
_ask() { /usr/local/bin/hive-agent call request_egress "{\"host\":\"$1\",\"reason\":\"spam\"}"; }
for i in $(seq 1000); do _ask pypi.org:443 >/dev/null; done
echo "again: $(_ask pypi.org:443)"
for i in $(seq 20); do _ask "h$i.example:443"; echo; done | grep -c "code: too_many_pending" | sed "s/^/refused: /"')
  echo "$out" | sed 's/^/  /'
  expect_eq "the spammer's rows for pypi.org:443" 1 \
    "$(_flood_db "SELECT COUNT(*) FROM approvals WHERE agent = ? AND commit_ref = ?" spammer pypi.org:443)"
  expect_match "the 1,001st identical request" "^again: already pending: approval [0-9]+ asks the same" \
    "$(grep '^again: ' <<<"$out")"
  # The cap (16 by default): the first row and 15 new hosts; the other 5 refused.
  expect_eq "the spammer's pending rows" 16 \
    "$(_flood_db "SELECT COUNT(*) FROM approvals WHERE agent = ? AND status = 'pending'" spammer)"
  expect_eq "new hosts refused with too_many_pending" "refused: 5" "$(grep '^refused: ' <<<"$out")"
  _flood_turn bystander '/usr/local/bin/hive-agent call request_egress "{\"host\":\"bystander.example:443\",\"reason\":\"mine\"}"' |
    sed 's/^/  /'
  wait_for 30 "the bystander's approval in notify_command's log" _flood_notified '"agent":"bystander"' ||
    { in_c cat /var/lib/hyperhive/tb-notify.log; return 1; }
  expect_eq "the spammer's approval_waiting runs (one; the rest inside notify_interval_secs)" 1 \
    "$(in_c grep -c '"event":"approval_waiting","id":[0-9]*,"agent":"spammer"' /var/lib/hyperhive/tb-notify.log)"
}
