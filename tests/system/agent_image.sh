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
