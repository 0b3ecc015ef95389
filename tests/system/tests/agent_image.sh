# shellcheck shell=bash
# The agent image (issue 27): systemd/image/build's self-contained Debian root, imported into
# the bed (a fresh Debian host with a systemd) as the template, with "bind_host_usr": false.
# An agent spawned from it runs the image's own Node, Claude Code and hive-agent, and nothing
# of the host's /usr is bound into it. Beside it, in the same run, an agent of the host-/usr
# template (what the other tests use: it boots in a fraction of a second) for the spawn-time
# ratio, and to show that it keeps its bind when the hive switches.
# The image comes from tb_image_tar (built once, cached) and tb_image_template
# (tests/system/agent_image.sh).

# shellcheck source=../agent_image.sh
source "$HERE/agent_image.sh"

# _img_as_agent NAME SCRIPT: SCRIPT run by bash inside h-NAME as the harness's user `agent`
# (a transient service of the container's own systemd, in its clean environment). Its '$'
# doubled: systemd expands $VAR in a unit's command line (systemd-run 252 has no
# --expand-environment=no), and "$$" is its literal dollar.
_img_as_agent() {
  in_c systemd-run -M "h-$1" --wait --pipe --quiet -p User=agent /bin/bash -c "${2//\$/\$\$}" 2>&1
}

# The mount points on /usr or under it, as the container's mountinfo says (a bind of the
# host's /usr shows up as /usr). No awk: the bed's /etc (a tmpfs) has no /etc/alternatives, so
# a host-/usr container has none.
_IMG_USR_MOUNTS='cut -d " " -f 5 /proc/self/mountinfo | grep -E "^/usr(/|$)" || true'

# _img_spawn NAME: `hivectl spawn NAME`; prints the milliseconds until multi-user.target is
# active in h-NAME.
_img_spawn() {
  local t out
  t=$(tb_now)
  out=$(hivectl_root spawn "$1" 2>&1) || { echo "hivectl spawn $1 failed: $out" >&2; return 1; }
  tb_wait_machine 120 "h-$1" >&2 || return 1
  echo $(( ($(tb_now) - t) / 1000 ))
}

_img_turn_failed() {
  in_c journalctl -M h-img-a -u hive-agent AGENT=img-a --no-pager -o cat | grep -q "turn failed"
}

an_agent_of_the_built_image_runs_its_own_node_and_claude_and_nothing_of_the_hosts_usr() {
  local tar usr_ms img_ms out
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_agents img-usr img-a
  # First an agent of a host-/usr template with the harness (the default bind_host_usr: true).
  tb_agent_template hive-agent-usr
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-agent-usr"}'
  usr_ms=$(_img_spawn img-usr)
  out=$(_img_as_agent img-usr "$_IMG_USR_MOUNTS")
  expect_match "the mount points under /usr in the host-/usr agent" "^/usr$" "$out"
  # The hive switches to the image (the daemon reads its config when it starts).
  in_c systemctl stop "$TB_UNIT"
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-image", "bind_host_usr": false}'
  img_ms=$(_img_spawn img-a)
  echo "figure: spawn to multi-user.target: host-/usr template $usr_ms ms, image $img_ms ms" \
    "($(awk -v a="$img_ms" -v b="$usr_ms" 'BEGIN { printf "%.1f", a / b }')x)"

  # Its settings file binds nothing of the host's /usr; the older agent's keeps its bind.
  expect_eq "lines naming /usr in h-img-a.nspawn" "" \
    "$(in_c grep -F /usr /etc/systemd/nspawn/h-img-a.nspawn || true)"
  expect_eq "the /usr line of h-img-usr.nspawn (made before the switch)" "BindReadOnly=/usr" \
    "$(in_c grep -F /usr /etc/systemd/nspawn/h-img-usr.nspawn)"

  # Inside, as the harness's user: no mount on /usr, node is the image's Debian package's,
  # claude is the pinned CLI, a Node script run by that node.
  out=$(_img_as_agent img-a "$_IMG_USR_MOUNTS")
  expect_eq "the mount points under /usr in the image agent" "" "$out"
  out=$(_img_as_agent img-a 'id -un
command -v node
node -e "console.log(process.execPath, process.version)"
echo "v$(dpkg-query -W -f "\${Version}" nodejs | sed "s/[+~].*//")"
command -v claude
head -n 1 "$(readlink -f "$(command -v claude)")"
claude --version')
  expect_eq "user; node; its path and version; the nodejs package's; claude; its interpreter; its version" \
    "agent
/usr/bin/node
/usr/bin/node $(sed -n 4p <<<"$out")
$(sed -n 4p <<<"$out")
/usr/local/bin/claude
#!/usr/bin/env node
2.1.112 (Claude Code)" "$out"
  expect_match "the image's nodejs package version" "^v18\." "$(sed -n 4p <<<"$out")"

  # The image's hive-agent runs its turn loop on the agent socket: it reported the login state
  # (no credentials), and a message sent to it is taken into a turn of the image's claude,
  # which fails for want of a login (and is retried).
  tb_wait_machine 30 h-img-a hive-agent.service ||
    { in_c journalctl -M h-img-a -u hive-agent --no-pager -n 30; return 1; }
  wait_for 30 "img-a's login state on the roster" _img_needs_login
  hivectl_root send img-a "hello from the operator"
  wait_for 90 "a turn of img-a" _img_turn_failed ||
    { in_c journalctl -M h-img-a -u hive-agent --no-pager -n 30; return 1; }
  expect_match "the turn's failure" "Not logged in" \
    "$(in_c journalctl -M h-img-a -u hive-agent AGENT=img-a --no-pager -o cat | grep "turn failed")"
}

_img_needs_login() {
  [ "$(hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
print([r for r in json.load(sys.stdin)["agent_statuses"] if r["name"] == "img-a"][0]["needs_login"])')" = True ]
}
