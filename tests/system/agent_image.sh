# shellcheck shell=bash
# The agent image in the test-bed: a template under /var/lib/machines/NAME in the bed with the
# harness installed by the project's own recipe step (systemd/image/install-agent: the shipped
# hive-agent.service, enabled). The binary is not copied: the nspawn profile binds the bed's
# /usr into each agent container, and the bed's /usr/local/bin carries the built hive-agent.
# Sourced by tests/system/hive-shell and tests/system/tests/harness.sh (after lib.sh).

# tb_agent_template NAME [CONFIG-FILE]: the template NAME (tb_make_template) with hive-agent
# installed; CONFIG-FILE becomes its /etc/hive-agent/config.json.
tb_agent_template() {
  local name=$1 config=${2:-}
  tb_make_template "$name"
  local args=("/proc/$(tb_leader)/root/var/lib/machines/$name")
  [ -n "$config" ] && args+=(--config "$config")
  "$TB_REPO/systemd/image/install-agent" "${args[@]}"
}

# tb_stand_in_template NAME: tb_agent_template NAME with a stand-in Claude command, read from
# stdin into the template's /etc/hive-agent/stand-in (a short recv wait, a 1 s retry backoff,
# a 5 s stop grace). Done once per bed: an existing template is kept.
tb_stand_in_template() {
  local name=$1 root dir
  root="/proc/$(tb_leader)/root/var/lib/machines/$1"
  if in_c test -e "/var/lib/machines/$name/etc/os-release"; then cat >/dev/null; return 0; fi
  dir=$(mktemp -d)
  cat > "$dir/config.json" <<'JSON'
{"claude_command": ["/etc/hive-agent/stand-in"], "recv_wait_seconds": 5, "retry_backoff_seconds": 1, "stop_grace_seconds": 5}
JSON
  tb_agent_template "$name" "$dir/config.json"
  cat > "$root/etc/hive-agent/stand-in"
  chmod 0755 "$root/etc/hive-agent/stand-in"
  rm -rf "$dir"
}
