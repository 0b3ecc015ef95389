# shellcheck shell=bash
# Logs through host.sock under the real journald: `hivectl logs` reads a nested agent
# container's journal (journalctl -M h-<n> as the daemon runs it, under the shipped unit's
# sandbox), `hivectl journal` filters the bed's journal, and the daemon's own lines about an
# agent carry AGENT=<n>.

_say_in() {   # _say_in AGENT WORDS: a line written by a unit inside h-AGENT (its journal)
  in_c timeout 20 systemd-run -q -M "h-$1" --wait sh -c "echo $2"
}

_logs_show() { hivectl_root logs "$1" -n 100 | grep -qF "$2"; }
hivectl_logs_shows_what_an_agent_container_wrote() {
  tb_hive; tb_agents lines
  tb_spawn lines
  local marker="tb-marker-$RANDOM$RANDOM"
  _say_in lines "$marker"
  wait_for 5 "hivectl logs lines to show $marker" _logs_show lines "$marker" || true
  expect_match "hivectl logs lines -n 100" "h-lines sh\[[0-9]+\]: $marker\$" \
    "$(hivectl_root logs lines -n 100 2>&1)"
  expect_match "the entry's hostname and unit, as JSON" "\"hostname\":\"h-lines\".*\"message\":\"$marker\"" \
    "$(hivectl_root --json logs lines -n 100 2>&1 | tr '}' '\n' | grep -F "$marker")"
}

_follow_shows() { grep -qF "$1" "$TB_DIR/follow.out"; }
hivectl_logs_follow_shows_a_new_line_within_a_second() {
  tb_hive; tb_agents follow
  tb_spawn follow
  local first="tb-first-$RANDOM$RANDOM" second="tb-second-$RANDOM$RANDOM"
  _say_in follow "$first"
  in_c timeout 30 hivectl logs -f follow -n 5 >"$TB_DIR/follow.out" 2>&1 &
  follower=$!   # global: the EXIT trap runs after this function's locals are gone
  trap 'kill "$follower" 2>/dev/null || true; tb_forget_agents' EXIT
  wait_for 5 "hivectl logs -f to print the earlier line" _follow_shows "$first"
  _say_in follow "$second"    # returns once the unit inside has run
  wait_for 1 "hivectl logs -f to print the new line within 1 s" _follow_shows "$second" || {
    echo "  hivectl logs -f printed:"; sed 's/^/    /' "$TB_DIR/follow.out"; false; }
}

_journal_follow_shows() { grep -qF "$1" "$TB_DIR/journal-follow.out"; }
hivectl_journal_follow_shows_a_new_line_of_a_host_unit_within_a_second() {
  tb_hive
  local first="tb-jfirst-$RANDOM$RANDOM" second="tb-jsecond-$RANDOM$RANDOM"
  in_c systemd-run -q --wait --unit=tb-jfollow-1 sh -c "echo $first"
  in_c timeout 30 hivectl journal -f --grep tb-j -o cat >"$TB_DIR/journal-follow.out" 2>&1 &
  jfollower=$!   # global: the EXIT trap runs after this function's locals are gone
  trap 'kill "$jfollower" 2>/dev/null || true' EXIT
  wait_for 5 "hivectl journal -f to print the earlier line" _journal_follow_shows "$first"
  in_c systemd-run -q --wait --unit=tb-jfollow-2 sh -c "echo $second"
  wait_for 1 "hivectl journal -f to print the new line within 1 s" _journal_follow_shows "$second" || {
    echo "  hivectl journal -f printed:"; sed 's/^/    /' "$TB_DIR/journal-follow.out"; false; }
}

# `--since -1h` with the 100-line clamp: the newest 100 lines of the hour. journalctl 252 alone
# answers `--since=X --lines=N` with the OLDEST N after X; before the daemon asked for them in
# reverse, this query in a bed that had run a dozen tests returned only the bed's first lines.
hivectl_journal_selects_the_daemons_lines_by_unit_and_priority() {
  local since="@$(( $(tb_now) / 1000000 - 1 ))"
  tb_hive; tb_agents prio
  hivectl_root spawn prio >/dev/null
  in_c kill -KILL "$(unit_prop systemd-nspawn@h-prio.service MainPID)"   # a warning line
  wait_for 2 "the row to say failed" tb_row_is prio failed
  in_c systemd-run -q --wait --unit=tb-other sh -c 'echo tb-other-unit-line'
  local info warn json
  info=$(hivectl_root journal --unit "$TB_UNIT" --priority info --since -1h -n 100 2>&1)
  expect_match "journal --unit $TB_UNIT --priority info: the spawn line" "hive-c0re\[[0-9]+\]: prio: spawned$" "$info"
  expect_match "journal --unit $TB_UNIT --priority info: the crash line" "hive-c0re\[[0-9]+\]: prio: container crashed \(unit result: signal\)$" "$info"
  expect_eq "lines of another unit in it" "" "$(grep -F tb-other-unit-line <<<"$info" || true)"
  json=$(hivectl_root --json journal --unit "$TB_UNIT" --priority info --since "$since" -n 100 2>&1)
  # journalctl -u semantics: the unit's own lines and systemd's lines about the unit
  expect_eq "entries neither from $TB_UNIT nor systemd's about it, or below info" "" \
    "$("$TB_PYTHON" -c 'import json, sys
for e in json.load(sys.stdin)["entries"]:
    own = e.get("unit") == "hive-c0re.service"
    about = e.get("identifier") == "systemd" and "hive-c0re.s" in e.get("message", "")
    if not (own or about) or e.get("priority") == "debug":
        print(e.get("unit"), e.get("identifier"), e.get("priority"), e.get("message"))' <<<"$json")"
  warn=$(hivectl_root journal --unit "$TB_UNIT" --priority warning --since "$since" -n 100 2>&1)
  expect_match "journal --priority warning: the crash line" "prio: container crashed \(unit result: signal\)$" "$warn"
  expect_eq "info lines in journal --priority warning" "" "$(grep -E ': (prio: spawned|ready: .*)$' <<<"$warn" || true)"
  expect_match "journal --unit tb-other.service" "tb-other-unit-line$" \
    "$(hivectl_root journal --unit tb-other.service --since "$since" 2>&1)"
}

_agent_lines_have() {   # _agent_lines_have AGENT LINE: the daemon logged LINE with AGENT=AGENT
  in_c journalctl -u "$TB_UNIT" AGENT="$1" -o cat --no-pager | grep -qx "$2"
}
the_daemons_lines_about_an_agent_carry_its_name_in_the_agent_field() {
  tb_hive; tb_agents tagged
  hivectl_root spawn tagged >/dev/null
  hivectl_root stop tagged >/dev/null
  local mine
  # journald may be a moment behind (a booting container floods it)
  wait_for 5 "the spawn line with AGENT=tagged" _agent_lines_have tagged "tagged: spawned" || true
  mine=$(in_c journalctl -u "$TB_UNIT" AGENT=tagged -o cat --no-pager)
  # the agent is named in the text too, not only in the field (-o cat shows no fields)
  expect_match "journalctl -u $TB_UNIT AGENT=tagged" "^tagged: spawned$" "$mine"
  expect_eq "lines with AGENT=tagged that are not about it (another agent's, startup)" "" \
    "$(grep -E '^(ready|opening|loading)' <<<"$mine" || true)"
  expect_eq "AGENT=tagged lines from a process other than hive-c0re" "" \
    "$(in_c journalctl AGENT=tagged -o json --no-pager | grep -v '"_COMM":"hive-c0re"' || true)"
}
