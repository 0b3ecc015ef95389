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

# --- a real Claude Code turn through the egress proxy ------------------------------------------
# The image's own claude, taking a turn the way the hive runs it: its API (ANTHROPIC_BASE_URL)
# and a fake key come from the agent's reviewed agent.json (deployed through the manager socket
# and an approval: config_repos.sh's _cr_deploy_key), and the API is a stand-in of
# the Messages API on the bed's 127.0.0.2 (tests/clients/messages_standin.py; not 127.0.0.1,
# which NO_PROXY keeps inside the container): reachable only through the hive's egress proxy,
# allow-listed by the hive's config. Beside it, the proxy's throughput for one large download.

TB_IMG_BULK=47031        # the bed's bulk stand-in (100 MiB of zeros)
TB_IMG_BULK_MB=100

# _img_api_stand_ins: the Messages API stand-in (on a free port of 127.0.0.2, put in
# TB_IMG_API_PORT) and the bulk stand-in; an EXIT trap stops them and destroys the test's
# agents. Not in a command substitution: its subshell's exit would run the trap at once.
_img_api_stand_ins() {
  cp "$TB_REPO/tests/clients/messages_standin.py" "/proc/$(tb_leader)/root/run/tb-messages-standin.py"
  in_c rm -f /run/tb-api.port /run/tb-api.log
  in_c systemd-run -q --collect --unit=tb-api-stand-in -E STANDIN_HOST=127.0.0.2 \
    "$TB_PYTHON" /run/tb-messages-standin.py /run/tb-api.port /run/tb-api.log operator \
    "hello from the image's claude"
  in_c systemd-run -q --collect --unit=tb-bulk-stand-in "$TB_PYTHON" -c "
import http.server, socketserver
CHUNK = bytes(1 << 20)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header('Content-Length', str($TB_IMG_BULK_MB << 20))
        self.end_headers()
        for _ in range($TB_IMG_BULK_MB): self.wfile.write(CHUNK)
    def log_message(self, *a): pass
socketserver.TCPServer.allow_reuse_address = True
socketserver.TCPServer(('127.0.0.2', $TB_IMG_BULK), H).serve_forever()"
  trap 'in_c systemctl stop tb-api-stand-in tb-bulk-stand-in 2>/dev/null || true; tb_forget_agents' EXIT
  wait_for 10 "the API stand-in's port" in_c test -s /run/tb-api.port
  TB_IMG_API_PORT=$(in_c cat /run/tb-api.port)
  wait_for 10 "the bulk stand-in" in_c curl -sf -o /dev/null -r 0-0 "http://127.0.0.2:$TB_IMG_BULK/"
}

_img_inbox_has() { hivectl_root inbox | grep -qF -- "$1"; }

# shellcheck disable=SC2016  # the scripts' $ are the agent's
a_message_to_an_agent_of_the_image_is_a_claude_turn_through_the_egress_proxy_that_completes() {
  local tar port out turns proxy_s direct_s
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_agents imgapi
  _img_api_stand_ins
  port=$TB_IMG_API_PORT
  tb_hive "{\"stop_deadline_secs\": 2, \"template_image\": \"hive-image\", \"bind_host_usr\": false,
    \"egress_allow\": [\"api.anthropic.com:443\", \"127.0.0.2:$port\", \"127.0.0.2:$TB_IMG_BULK\"]}"
  _img_spawn imgapi >/dev/null
  _cr_deploy_key imgapi environment "{\"ANTHROPIC_BASE_URL\": \"http://127.0.0.2:$port\",
    \"ANTHROPIC_API_KEY\": \"sk-stand-in\", \"CLAUDE_CODE_MAX_RETRIES\": \"0\",
    \"DISABLE_AUTOUPDATER\": \"1\", \"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC\": \"1\"}"
  tb_wait_machine 120 h-imgapi hive-agent.service ||
    { in_c journalctl -M h-imgapi -u hive-agent --no-pager -n 30; return 1; }
  # The key in agent.json logs it in: the roster says no login is needed.
  wait_for 30 "imgapi's login state (logged in)" _img_logged_in imgapi ||
    { in_c journalctl -M h-imgapi -u hive-agent --no-pager -n 30; return 1; }

  hivectl_root send imgapi "please greet the operator"
  wait_for 120 "imgapi's reply through its send tool" _img_inbox_has "hello from the image's claude" ||
    { in_c journalctl -M h-imgapi -u hive-agent --no-pager -n 40; in_c cat /run/tb-api.log; return 1; }
  expect_match "the operator's inbox" "imgapi.*hello from the image's claude" "$(hivectl_root inbox)"
  # The turn journal: the turn completed, with the send tool's call.
  wait_for 30 "imgapi's turn in the journal" _img_turn_ok imgapi
  turns=$(hivectl_root turns imgapi)
  echo "$turns" | sed 's/^/  /'
  expect_match "hivectl turns imgapi" " ok" "$turns"
  expect_match "the send tool's call in the turn" "mcp__hyperhive__send" "$turns"
  # The stand-in saw the CLI's requests, offered the hive's tools and given the tool's result.
  out=$(in_c cat /run/tb-api.log)
  expect_match "a request offering the send tool" '"tools": \[[^]]*"mcp__hyperhive__send"' "$out"
  expect_match "a request carrying the tool's result" '"tool_results": \[\{' "$out"
  # Through the proxy: the egress service's journal names the agent and the stand-in.
  expect_match "the egress journal (AGENT=imgapi)" "imgapi: egress to 127\.0\.0\.2:$port: [0-9]+ bytes out" \
    "$(in_c journalctl -u hive-c0re-egress AGENT=imgapi --no-pager -o cat)"

  # The proxy's throughput for one large download: as the agent's user through a forwarder
  # (the harness's, run for a shell), against a direct fetch by the bed, same run.
  # The script is a file in the agent's state (no systemd specifiers or $ expansion of a
  # transient unit's command line to escape).
  printf '%s\n' '/usr/local/bin/hive-agent egress-forward --listen 127.0.0.1:3128 >/dev/null 2>&1 &
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.1; done
t=$(date +%s%N)
n=$(curl -sf -x http://127.0.0.1:3128 -o /dev/null -w "%{size_download}" "$1")
echo "$n $(( ($(date +%s%N) - t) / 1000000 ))"
kill $!' | in_c sh -c 'cat > /var/lib/hyperhive/agents/imgapi/tb-bulk.sh; chmod 0644 /var/lib/hyperhive/agents/imgapi/tb-bulk.sh'
  proxy_s=$(_img_as_agent imgapi "/bin/bash /var/lib/hive/tb-bulk.sh http://127.0.0.2:$TB_IMG_BULK/" |
    tail -n 1)
  expect_match "the download through the proxy (bytes ms)" "^$((TB_IMG_BULK_MB << 20)) [0-9]+$" "$proxy_s"
  direct_s=$(in_c sh -c 't=$(date +%s%N)
n=$(curl -sf -o /dev/null -w "%{size_download}" http://127.0.0.2:'"$TB_IMG_BULK"'/)
echo "$n $(( ($(date +%s%N) - t) / 1000000 ))"')
  expect_match "the direct download (bytes ms)" "^$((TB_IMG_BULK_MB << 20)) [0-9]+$" "$direct_s"
  echo "figure: one $TB_IMG_BULK_MB MiB download: through the proxy ${proxy_s#* } ms, direct ${direct_s#* } ms" \
    "($(awk -v p="${proxy_s#* }" -v d="${direct_s#* }" -v m="$TB_IMG_BULK_MB" \
      'BEGIN { printf "%.0f against %.0f MiB/s, %.2fx", m * 1000 / p, m * 1000 / d, d / p }'))"
}

_img_turn_ok() { hivectl_root turns "$1" | grep -q ' ok'; }
_img_logged_in() {
  [ "$(hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
print([r for r in json.load(sys.stdin)["agent_statuses"] if r["name"] == sys.argv[1]][0]["needs_login"])' "$1")" = False ]
}
