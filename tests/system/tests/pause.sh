# shellcheck shell=bash
# Issue 44, the pause is the host's: attacked from the agent's shell (isolation.sh's probe, a
# child of `hive-agent run` as Claude's Bash tool runs). The agent plants a link where the old
# pause marker lived and leaves a process running that deletes whatever is there; neither
# changes what the roster says, and neither lifts `hivectl pause`.

# _pz_paused NAME: the roster's `paused` for NAME (True/False).
_pz_paused() {
  hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
for r in json.load(sys.stdin).get("agent_statuses") or []:
    if r["name"] == sys.argv[1]:
        print(r["paused"])' "$1"
}

# shellcheck disable=SC2016  # the probe's $ are the agent's
hivectl_pause_holds_the_next_message_and_no_process_of_the_agent_can_lift_it() {
  _iso_hive pz
  local out word
  out=$(_iso_probe pz '
ln -sfn / /var/lib/hive/paused && echo "planted $(readlink /var/lib/hive/paused)"
setsid sh -c "while :; do rm -rf /var/lib/hive/paused; sleep 0.1; done" </dev/null >/dev/null 2>&1 &
echo "eraser $!"')
  echo "$out" | sed 's/^/  /'
  expect_eq "the planted link" "planted /" "$(grep '^planted ' <<<"$out")"
  expect_match "the agent's eraser left running" '^eraser [0-9]+$' "$(grep '^eraser ' <<<"$out")"
  # A link to a path that exists makes the roster say nothing.
  expect_eq "pz's roster row before the pause" False "$(_pz_paused pz)"

  expect_eq "hivectl pause" "pz: paused" "$(hivectl_root pause pz)"
  expect_eq "pz's roster row, paused" True "$(_pz_paused pz)"
  word="held-$RANDOM$RANDOM"
  hivectl_root send pz "$word" >/dev/null
  # The eraser runs ten times a second all along: had the pause been its file, the turn
  # would start within the harness's first poll (0.1 s after the send, before this change).
  sleep 5
  if _iso_inbox_has "got: $word"; then
    echo "  pz answered $word while paused"; return 1
  fi
  expect_eq "pz's roster row after 5 s of its eraser" True "$(_pz_paused pz)"
  # The bed's PID namespace holds the container's: the eraser is seen from here.
  expect_match "the eraser still running in pz" '^[0-9]+' \
    "$(in_c pgrep -f 'rm -rf /var/lib/hive/paused' | head -n 1)"

  expect_eq "hivectl resume" "pz: resumed" "$(hivectl_root resume pz)"
  wait_for 30 "pz's reply to $word after the resume" _iso_inbox_has "got: $word" ||
    { in_c journalctl -M h-pz -u hive-agent --no-pager -n 30; return 1; }
  expect_eq "pz's roster row, resumed" False "$(_pz_paused pz)"
}
