# shellcheck shell=bash
# The crash matrix (issue 32): each lifecycle operation, with the daemon SIGKILLed at several
# points into it, under the real systemd and machined. After each kill systemd restarts the
# daemon (Restart=on-failure); then the roster must agree with the unit, machined and the
# settings file (_cm_consistent), the agent's state must still be there (unless purged), and
# the operation tried again must end as asked. The time from the kill to a consistent roster
# is printed as a figure line per operation (min / median / max, in ms).
#
# CM_DELAYS (seconds after the client starts) says where the kills land; the default spans
# "before the request is read" to "after the answer". CM_ROUNDS repeats each delay.

CM_DELAYS=${CM_DELAYS:-"0 0.02 0.05 0.1 0.2 0.4 1"}
CM_ROUNDS=${CM_ROUNDS:-1}

# _cm_state NAME: "ROW UNIT MACHINE SETTINGS" as words (ROW: running/stopped/failed/none;
# UNIT: systemd's ActiveState; MACHINE: yes/no, registered with machined; SETTINGS: yes/no,
# /etc/systemd/nspawn/h-NAME.nspawn exists).
_cm_state() {
  local row unit machine=no settings=no
  row=$(tb_row "$1"); row=${row:-none}
  unit=$(in_c systemctl show -P ActiveState "systemd-nspawn@h-$1.service")
  m1 GetMachine s "h-$1" >/dev/null 2>&1 && machine=yes
  in_c test -e "/etc/systemd/nspawn/h-$1.nspawn" && settings=yes
  echo "$row $unit $machine $settings"
}

# _cm_consistent NAME: the roster agrees with systemd, machined and the settings file.
_cm_consistent() {
  case "$(_cm_state "$1")" in
    "running active yes yes" | "stopped inactive no yes" | "failed failed no yes") return 0 ;;
    "none inactive no no" | "none failed no no") return 0 ;;
  esac
  return 1
}

# _cm_kill_after SECS HIVECTL-ARGS...: run hivectl with ARGS in the background, SIGKILL the
# daemon SECS later, wait for hivectl, then wait until systemd has the daemon up again (it
# restarts by itself; the start-rate limit is reset so many kills in a row stay allowed).
# Sets CM_KILLED_AT (microseconds).
_cm_kill_after() {
  local secs=$1; shift
  hivectl_root status >/dev/null   # the daemon is up before the operation starts
  ( hivectl_root "$@" >/dev/null 2>&1 || true ) &
  local client=$!
  sleep "$secs"
  in_c systemctl kill -s KILL "$TB_UNIT" 2>/dev/null || true
  CM_KILLED_AT=$(tb_now)
  wait "$client" || true
  in_c systemctl reset-failed "$TB_UNIT" 2>/dev/null || true
  wait_for 30 "the daemon to answer again" hivectl_root status
}

# _cm_settle NAME: wait until NAME is consistent; record the time since the kill.
_cm_settle() {
  if ! wait_for 60 "$1 to be consistent" _cm_consistent "$1"; then
    echo "inconsistent: $1: $(_cm_state "$1")"
    return 1
  fi
  CM_TIMES+=("$(( ($(tb_now) - CM_KILLED_AT) / 1000 ))")
}

# _cm_figure OP: print the figure line for OP from CM_TIMES.
_cm_figure() {
  local sorted
  mapfile -t sorted < <(printf '%s\n' "${CM_TIMES[@]}" | sort -n)
  local finished failed
  failed=$(journal_tail "$TB_UNIT" 5000 | grep -E "finishing the .* a stop interrupted failed" || true)
  expect_eq "finishes that failed" "" "$failed"
  finished=$(journal_tail "$TB_UNIT" 5000 \
    | grep -cE "the daemon stopped during its|approval interrupted by a restart" || true)
  echo "figure: $1: ${#sorted[@]} kills at ${CM_DELAYS// /, } s; kill to consistent roster:" \
    "min ${sorted[0]} ms, median ${sorted[$(( ${#sorted[@]} / 2 ))]} ms, max ${sorted[-1]} ms;" \
    "$finished left work the restarted daemon finished"
}

# _cm_expect NAME STATE: NAME's consistent state is STATE (running, stopped, none).
_cm_expect() {
  local seen; seen=$(_cm_state "$1")
  expect_eq "$1 after the retry (row unit machine settings)" "$2" "${seen%% *}"
}

# _cm_trials OP: run _cm_OP_setup NAME, the kill, _cm_settle, _cm_OP_retry NAME for every
# delay and round; each trial gets its own agent name.
_cm_trials() {
  local op=$1 d r i=0 name
  CM_TIMES=()
  tb_hive
  for r in $(seq "$CM_ROUNDS"); do
    for d in $CM_DELAYS; do
      name="cm${op:0:3}$i"; i=$((i + 1))
      TB_AGENTS+=("$name")
      "_cm_${op}_setup" "$name"
      _cm_kill_after "$d" "${CM_ARGS[@]}"
      _cm_settle "$name"
      "_cm_${op}_retry" "$name"
      [ "${CM_KEEP:-0}" = 1 ] || hivectl_root destroy --purge "$name" >/dev/null 2>&1 || true
    done
  done
  _cm_figure "$op"
}

# A marker in the agent's state directory: kept by every operation but a purge.
_cm_mark() { in_c sh -c "echo kept > /var/lib/hyperhive/agents/$1/cm-marker"; }
_cm_marked() { expect_eq "$1's state directory survived" kept "$(in_c cat "/var/lib/hyperhive/agents/$1/cm-marker")"; }

_cm_spawn_setup() { CM_ARGS=(spawn "$1"); }
_cm_spawn_retry() {
  local out rc=0
  out=$(hivectl_root spawn "$1" 2>&1) || rc=$?
  # Done before the kill: "already exists" is the right answer to the retry.
  [ "$rc" = 0 ] || expect_match "retried spawn of $1 (exit $rc)" "already exists" "$out"
  wait_for 30 "$1 to run" tb_row_is "$1" running
  _cm_expect "$1" running
}

_cm_approved_setup() {
  local out
  out=$(hivectl_root request-spawn "$1" 2>&1)
  CM_ID=$(sed -n "s/^approval \([0-9]*\): spawn $1, pending.*/\1/p" <<<"$out")
  expect_match "request-spawn's answer" '^[0-9]+$' "$CM_ID"
  CM_ARGS=(approve "$CM_ID")
}
_cm_approved_retry() {
  local status
  # A row the killed daemon had claimed is ended at its restart, or (its agent registered)
  # finished in the background; a row still pending with no agent was never claimed.
  wait_for 60 "approval $CM_ID to settle" _cm_approval_settled "$CM_ID" "$1"
  status=$(tb_approval_field "$CM_ID" status)
  case "$status" in
    pending) hivectl_root approve "$CM_ID" >/dev/null 2>&1 || true ;;
    approved) ;;
    failed)
      # Claimed, and killed before it registered the agent: the note says to ask again.
      expect_match "approval $CM_ID's note" "not spawned: request again" "$(tb_approval_field "$CM_ID" note)"
      _cm_approved_setup "$1"
      hivectl_root approve "$CM_ID" >/dev/null 2>&1 || true ;;
    *) echo "approval $CM_ID ended $status: $(tb_approval_field "$CM_ID" note)"; return 1 ;;
  esac
  wait_for 60 "approval $CM_ID to end approved" tb_approval_is "$CM_ID" approved
  wait_for 30 "$1 to run" tb_row_is "$1" running
  _cm_expect "$1" running
}
# _cm_approval_settled ID NAME: the row ended, or is pending with no agent NAME registered.
_cm_approval_settled() {
  [ "$(tb_approval_field "$1" status)" != pending ] || [ -z "$(tb_row "$2")" ]
}

_cm_destroy_setup() { tb_spawn "$1"; _cm_mark "$1"; CM_ARGS=(destroy "$1"); }
_cm_destroy_retry() {
  hivectl_root destroy "$1" >/dev/null 2>&1 || true   # "not managed" when it was done
  _cm_expect "$1" none
  _cm_marked "$1"
}

_cm_purge_setup() { tb_spawn "$1"; _cm_mark "$1"; CM_ARGS=(destroy --purge "$1"); }
_cm_purge_retry() {
  hivectl_root destroy --purge "$1" >/dev/null 2>&1 || true
  _cm_expect "$1" none
  expect_eq "$1's state directory after the purge" gone \
    "$(in_c test -e "/var/lib/hyperhive/agents/$1" && echo there || echo gone)"
}

# _cm_lifecycle_retry VERB NAME STATE: `hivectl VERB NAME` again leaves NAME in STATE, its
# state directory kept.
_cm_lifecycle_retry() {
  hivectl_root "$1" "$2" >/dev/null
  wait_for 30 "$2 to be $3" tb_row_is "$2" "$3"
  _cm_expect "$2" "$3"
  _cm_marked "$2"
}
_cm_stop_setup() { tb_spawn "$1"; _cm_mark "$1"; CM_ARGS=(stop "$1"); }
_cm_stop_retry() { _cm_lifecycle_retry stop "$1" stopped; }
_cm_restart_setup() { tb_spawn "$1"; _cm_mark "$1"; CM_ARGS=(restart "$1"); }
_cm_restart_retry() { _cm_lifecycle_retry restart "$1" running; }

_cm_parent_of() {
  hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
for r in json.load(sys.stdin).get("agent_statuses") or []:
    if r["name"] == sys.argv[1]:
        print(r.get("parent") or "")' "$1"
}
_cm_setparent_setup() {
  tb_spawn "$1"; _cm_mark "$1"
  hivectl_root spawn "$1p" >/dev/null; TB_AGENTS+=("$1p")
  CM_ARGS=(set-parent "$1" "$1p")
}
_cm_setparent_retry() {
  hivectl_root set-parent "$1" "$1p" >/dev/null
  expect_eq "$1's parent after the retry" "$1p" "$(_cm_parent_of "$1")"
  _cm_expect "$1" running
  _cm_marked "$1"
  hivectl_root destroy --purge "$1p" >/dev/null 2>&1 || true
}

a_spawn_killed_at_any_point_leaves_a_consistent_roster_and_a_retry_finishes_it() {
  tb_agents; _cm_trials spawn
}
an_approved_spawn_killed_at_any_point_ends_its_approval_and_the_agent_runs() {
  tb_agents; _cm_trials approved
}
a_destroy_killed_at_any_point_leaves_a_consistent_roster_and_keeps_the_state() {
  tb_agents; _cm_trials destroy
}
a_purge_killed_at_any_point_ends_with_nothing_of_the_agent_left() {
  tb_agents; _cm_trials purge
}
a_stop_killed_at_any_point_leaves_a_consistent_roster_and_a_retry_stops_it() {
  tb_agents; _cm_trials stop
}
a_restart_killed_at_any_point_leaves_a_consistent_roster_and_a_retry_runs_it() {
  tb_agents; _cm_trials restart
}
a_set_parent_killed_at_any_point_leaves_one_parent_and_a_retry_sets_it() {
  tb_agents; _cm_trials setparent
}
