# shellcheck shell=bash
# The in-container harness against the real systemd of the bed: an agent spawned from a
# template with hive-agent installed (systemd/image/install-agent) runs hive-agent.service in
# its own nested systemd, and a message sent with hivectl goes through the turn loop (a
# stand-in Claude command) and back to the operator's inbox.

# shellcheck source=../agent_image.sh
source "$HERE/agent_image.sh"

# The stand-in Claude command in the template: answers the turn's first message body with
# `hive-agent call send` to the operator (the same tool path Claude's mcp__hyperhive__send
# takes), and records its prompt.
_harness_template() {
  tb_stand_in_template hive-agent-template <<'SH'
#!/bin/bash
prompt=$(cat)
printf '%s\n' "$prompt" > /var/lib/hive/last-prompt
body=$(printf '%s\n' "$prompt" | sed -n '/^--- message /{n;p;q}')
exec /usr/local/bin/hive-agent call send "{\"to\":\"operator\",\"body\":\"got: $body\"}"
SH
}

_inbox_has() { hivectl_root inbox | grep -qF -- "$1"; }

a_spawned_agent_runs_hive_agent_and_a_message_to_it_comes_back_as_its_reply() {
  _harness_template
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-agent-template"}'
  tb_agents hal
  tb_spawn hal
  tb_wait_machine 30 h-hal hive-agent.service ||
    { in_c journalctl -M h-hal -u hive-agent --no-pager -n 30; return 1; }
  expect_eq "the unit's type and state" "notify active" \
    "$(in_c systemctl -M h-hal show -P Type hive-agent.service) $(in_c systemctl -M h-hal is-active hive-agent.service)"
  hivectl_root send hal "hello hal"
  wait_for 30 "hal's reply in the operator's inbox" _inbox_has "got: hello hal" ||
    { in_c journalctl -M h-hal -u hive-agent --no-pager -n 30; return 1; }
  # The turn was acked: nothing pending, nothing in flight for hal.
  expect_eq "hal's unacked messages" 0 \
    "$(in_c "$TB_PYTHON" -c 'import sqlite3; c = sqlite3.connect("file:/var/lib/hyperhive/hive.db?mode=ro", uri=True)
print(c.execute("SELECT COUNT(*) FROM messages WHERE recipient = ? AND state != ?", ("hal", "handled")).fetchone()[0])')"
  # The turn's outcome and duration are in the container's journal, under AGENT=hal.
  expect_match "the turn's journal entry (AGENT=hal)" "turn acked" \
    "$(in_c journalctl -M h-hal -u hive-agent AGENT=hal --no-pager -o cat)"
  # The grants reached the harness through PID 1's environment (the .nspawn Environment=),
  # not its fallback.
  expect_match "the harness's start lines in the container journal" \
    "tool groups messaging,meta,inbox,execution from HIVE_TOOL_GROUPS" \
    "$(in_c journalctl -M h-hal -u hive-agent --no-pager -o cat)"
  expect_eq "needs_login on the roster (no credentials in the state dir)" true \
    "$(hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
print(str([r for r in json.load(sys.stdin)["agent_statuses"] if r["name"] == "hal"][0]["needs_login"]).lower())')"
}

# How a container's grants reach a service: the daemon puts them in the .nspawn file's
# Environment= (PID 1's environment); systemd starts services in a clean one, and
# hive-agent.service (like the NixOS agent module) names them in PassEnvironment=, which
# copies them from PID 1's environment: checked here against the real nested systemd.
the_containers_grants_reach_a_service_only_through_pass_environment() {
  _harness_template
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-agent-template"}'
  tb_agents env
  tb_spawn env
  expect_eq "a plain service's HIVE_TOOL_GROUPS" "" \
    "$(in_c systemd-run -M h-env --wait --pipe --quiet /bin/sh -c 'printf %s "$HIVE_TOOL_GROUPS"' 2>&1)"
  expect_eq "PID 1's environment" "messaging,meta,inbox,execution" \
    "$(in_c systemd-run -M h-env --wait --pipe --quiet /bin/sh -c \
        'tr "\0" "\n" < /proc/1/environ | sed -n "s/^HIVE_TOOL_GROUPS=//p"' 2>&1)"
  expect_eq "with PassEnvironment=HIVE_TOOL_GROUPS" "messaging,meta,inbox,execution" \
    "$(in_c systemd-run -M h-env --wait --pipe --quiet -p PassEnvironment=HIVE_TOOL_GROUPS \
        /bin/sh -c 'printf %s "$HIVE_TOOL_GROUPS"' 2>&1)"
}

# Issue 47: Claude killed alone inside the agent's container mid-turn (SIGKILL, as an OOM kill
# would) — the next attempt resumes the same session and its prompt says the turn was cut.
# The stand-in runs as `claude_program`, so it gets the harness's own argv (`--resume`
# included); its first turn names session s-1 and hangs, the next ones reply with the session
# they were told to resume.
_resume_template() {
  _stand_in_template hive-agent-resume-template <<'SH'
if [ "$n" = 1 ]; then echo $$ > "$d/hang.pid"; exec sleep 600; fi
exec /usr/local/bin/hive-agent call send "{\"to\":\"operator\",\"body\":\"resumed ${resume:-nothing}\"}"
SH
}

# A template whose Claude is a stand-in script: a shared head (it counts its runs in
# /var/lib/hive/count, keeps each run's argv and prompt as argv.N and prompt.N, and names
# its session in the init event: the one it was told to --resume, else s-N), then the
# test's own lines, read from stdin.
_stand_in_template() {
  local name=$1 root dir
  root="/proc/$(tb_leader)/root/var/lib/machines/$name"
  in_c test -e "/var/lib/machines/$name/etc/os-release" && return 0
  dir=$(mktemp -d)
  cat > "$dir/config.json" <<'JSON'
{"claude_program": "/etc/hive-agent/stand-in", "recv_wait_seconds": 5, "retry_backoff_seconds": 1, "stop_grace_seconds": 5}
JSON
  tb_agent_template "$name" "$dir/config.json"
  {
    cat <<'SH'
#!/bin/bash
d=/var/lib/hive
n=$(( $(cat "$d/count" 2>/dev/null || echo 0) + 1 )); echo "$n" > "$d/count"
prompt=$(cat)
printf '%s\n' "$@" > "$d/argv.$n"
printf '%s\n' "$prompt" > "$d/prompt.$n"
resume=""; prev=""
for a in "$@"; do [ "$prev" = --resume ] && resume=$a; prev=$a; done
echo '{"type":"system","subtype":"init","session_id":"'"${resume:-s-$n}"'"}'
SH
    cat
  } > "$root/etc/hive-agent/stand-in"
  chmod 0755 "$root/etc/hive-agent/stand-in"
  rm -rf "$dir"
}

_in_res() { in_c systemd-run -M h-res --wait --pipe --quiet /bin/sh -c "$1" 2>&1; }

claude_killed_inside_the_container_mid_turn_is_resumed_in_the_same_session() {
  _resume_template
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-agent-resume-template"}'
  tb_agents res
  tb_spawn res
  tb_wait_machine 30 h-res hive-agent.service ||
    { in_c journalctl -M h-res -u hive-agent --no-pager -n 30; return 1; }
  hivectl_root send res "keep going"
  wait_for 30 "the first turn hanging" _in_res_has_pid ||
    { in_c journalctl -M h-res -u hive-agent --no-pager -n 30; return 1; }
  expect_eq "the session saved as soon as init named it" s-1 \
    "$(_in_res 'cat /var/lib/hive/claude-session')"
  _in_res 'kill -KILL "$(cat /var/lib/hive/hang.pid)"'
  wait_for 30 "the resumed turn's reply" _inbox_has "resumed s-1" ||
    { in_c journalctl -M h-res -u hive-agent --no-pager -n 30; return 1; }
  expect_eq "the second claude's --resume" "s-1" \
    "$(_in_res 'sed -n "/^--resume\$/{n;p}" /var/lib/hive/argv.2')"
  expect_match "the resumed prompt" "cut off" "$(_in_res 'cat /var/lib/hive/prompt.2')"
  expect_match "the resumed prompt's cause" "Claude Code exiting \\(signal: 9 \\(SIGKILL\\)\\)" \
    "$(_in_res 'cat /var/lib/hive/prompt.2')"
  expect_eq "the turn record after the turn" gone \
    "$(_in_res 'test -e /var/lib/hive/turn-in-progress.json && echo left || echo gone')"
}

_in_res_has_pid() { [ -n "$(_in_res 'cat /var/lib/hive/hang.pid 2>/dev/null')" ]; }

# Issue 47, nothing done twice: the harness SIGKILLed mid-turn after a send. Its stand-in
# Claude sends the operator "built it once" with `hive-agent call` (the path Claude's shell
# has; the MCP server keys its calls the same way) and hangs; killed with the harness, the
# resumed attempt makes the same send again and then reports it is done. The send carries the
# same idempotency key both times, so the operator's inbox has it once.
_once_template() {
  _stand_in_template hive-agent-once-template <<'SH'
/usr/local/bin/hive-agent call send '{"to":"operator","body":"built it once"}' >&2
if [ "$n" = 1 ]; then echo $$ > "$d/hang.pid"; exec sleep 600; fi
exec /usr/local/bin/hive-agent call send "{\"to\":\"operator\",\"body\":\"attempt $n done\"}" >&2
SH
}

_in_once() { in_c systemd-run -M h-once --wait --pipe --quiet /bin/sh -c "$1" 2>&1; }
_in_once_has_pid() { [ -n "$(_in_once 'cat /var/lib/hive/hang.pid 2>/dev/null')" ]; }
_inbox_count() { hivectl_root inbox | grep -cF -- "$1"; }

a_send_made_before_the_harness_was_sigkilled_mid_turn_reaches_the_operator_once() {
  _once_template
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-agent-once-template"}'
  tb_agents once
  tb_spawn once
  tb_wait_machine 30 h-once hive-agent.service ||
    { in_c journalctl -M h-once -u hive-agent --no-pager -n 30; return 1; }
  hivectl_root send once "build it and tell me"
  wait_for 30 "the send made and the turn hanging" _in_once_has_pid ||
    { in_c journalctl -M h-once -u hive-agent --no-pager -n 30; return 1; }
  expect_eq "the send before the kill" 1 "$(_inbox_count 'built it once')"
  # The harness alone (its main PID), as an OOM kill of it would; systemd restarts it.
  _in_once 'kill -KILL "$(systemctl show -p MainPID --value hive-agent.service)"'
  wait_for 60 "the resumed attempt's end" _inbox_has "attempt 2 done" ||
    { in_c journalctl -M h-once -u hive-agent --no-pager -n 40; return 1; }
  expect_eq "the second claude's --resume" s-1 \
    "$(_in_once 'sed -n "/^--resume\$/{n;p}" /var/lib/hive/argv.2')"
  expect_eq "the send made before the kill, after the resumed attempt repeated it" 1 \
    "$(_inbox_count 'built it once')"
  expect_eq "the attempt's call log after the turn" gone \
    "$(_in_once 'test -e /var/lib/hive/turn-calls && echo left || echo gone')"
}
