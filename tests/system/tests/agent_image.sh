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
  # which goes to the model gateway with the harness's sentinel: the hive holds no credential
  # (model_credential unset), so the gateway answers 401 saying so, with x-should-retry: false,
  # and the turn fails at once (Claude Code retries a bare 401 for minutes). The bed has no CA
  # store: the gateway is given the test CA, as an operator's extraCA would be.
  tb_wait_machine 30 h-img-a hive-agent.service ||
    { in_c journalctl -M h-img-a -u hive-agent --no-pager -n 30; return 1; }
  wait_for 30 "img-a's login state on the roster" _img_needs_login
  _img_gateway_ca
  hivectl_root send img-a "hello from the operator"
  wait_for 60 "a turn of img-a" _img_turn_failed ||
    { in_c journalctl -M h-img-a -u hive-agent --no-pager -n 30
      in_c journalctl -u hive-c0re-egress --no-pager -n 20; return 1; }
  expect_match "the turn's failure" "model_credential" \
    "$(in_c journalctl -M h-img-a -u hive-agent AGENT=img-a --no-pager -o cat | grep "turn failed")"
}

# _img_gateway_ca: the egress service's model gateway trusts the test CA (a drop-in, removed
# when the test ends), so that it is set up in the bed, whose host has no CA store.
_img_gateway_ca() {
  local dir=/run/tb-image-ca dropin=/run/systemd/system/hive-c0re-egress.service.d
  in_c mkdir -p "$dir" "$dropin"
  cp "$TB_REPO/tests/support/gateway/ca.pem" "/proc/$(tb_leader)/root$dir/ca.pem"
  printf '[Service]\nEnvironment=HIVE_MODEL_CA=%s/ca.pem\n' "$dir" |
    in_c sh -c "cat > $dropin/tb-image-ca.conf"
  trap 'in_c rm -rf /run/systemd/system/hive-c0re-egress.service.d /run/tb-image-ca
    in_c systemctl daemon-reload; tb_forget_agents' EXIT
  in_c systemctl daemon-reload
  in_c systemctl stop hive-c0re-egress.service 2>/dev/null || true
}

# The README's way to log an agent in: `machinectl shell agent@h-N` with
# CLAUDE_CONFIG_DIR=/var/lib/hive/claude, i.e. as the harness's user in the agent's range (a
# PAM session of the image's own systemd). What `claude login` leaves is its
# .credentials.json (the real command needs a browser: the shell writes the file as it would);
# it is the agent user's, in the agent's state, and the harness reports the agent logged in.
# shellcheck disable=SC2016  # the shell's $ are the agent's
a_login_made_with_machinectl_shell_as_agent_is_where_the_harness_finds_it() {
  local tar out
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_agents imglog
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-image", "bind_host_usr": false}'
  _img_spawn imglog >/dev/null
  tb_wait_machine 120 h-imglog hive-agent.service ||
    { in_c journalctl -M h-imglog -u hive-agent --no-pager -n 30; return 1; }
  wait_for 30 "imglog's login state (needs a login)" _img_login_is imglog True
  out=$(in_c machinectl -q shell agent@h-imglog /bin/sh -c 'export CLAUDE_CONFIG_DIR=/var/lib/hive/claude
mkdir -p "$CLAUDE_CONFIG_DIR" && printf "{\"claudeAiOauth\": {}}\n" > "$CLAUDE_CONFIG_DIR/.credentials.json"
chmod 600 "$CLAUDE_CONFIG_DIR/.credentials.json" && id -un' 2>&1 | tr -d '\r')
  expect_match "the user of machinectl shell agent@h-imglog" "^agent$" "$out" ||
    { in_c journalctl -M h-imglog --no-pager -n 30; return 1; }
  expect_eq "the login's file, as the harness's user sees it" "agent 600" \
    "$(_img_as_agent imglog 'stat -c "%U %a" /var/lib/hive/claude/.credentials.json')"
  # The harness looks again between turns (within one 30 s recv wait).
  wait_for 45 "imglog's login state (logged in)" _img_login_is imglog False ||
    { in_c journalctl -M h-imglog -u hive-agent --no-pager -n 30; return 1; }
}
_img_login_is() {
  [ "$(hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
print([r for r in json.load(sys.stdin)["agent_statuses"] if r["name"] == sys.argv[1]][0]["needs_login"])' "$1")" = "$2" ]
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

# --- turn latency before and after isolation ----------------------------------------------------
# Before issue 27 an agent shared the host's network and its Claude reached the Messages API
# directly; now every API request goes the container's loopback -> hive-agent's egress
# forwarder -> the daemon's egress proxy -> the upstream. The user range, the unprivileged
# harness and the dropped capabilities act at spawn and on system calls, not per request: the
# egress path is the per-turn difference.
# So the same image agent takes turns in two modes, in alternating blocks of one run:
# "after", ANTHROPIC_BASE_URL the bed's stand-in on 127.0.0.2 (through the proxy, as above);
# "before", the same stand-in program run inside the container on 127.0.0.1 (NO_PROXY keeps
# loopback direct: no proxy hop). Each mode is a deployed agent.json (a restart), and each turn
# is timed from the operator's send to the turn recorded in the turn journal
# (tests/system/turn_latency.py).

TB_IMG_DIRECT=47032      # the in-container stand-in's port on the container's loopback
TB_IMG_LAT_TURNS=5       # turns per block; blocks: proxy, direct, proxy, direct
TB_IMG_REPLY="hello from the image's claude"

# _img_lat_env URL: agent.json's environment for Claude against the API at URL.
_img_lat_env() {
  echo "{\"ANTHROPIC_BASE_URL\": \"$1\", \"ANTHROPIC_API_KEY\": \"sk-stand-in\",
    \"CLAUDE_CODE_MAX_RETRIES\": \"0\", \"DISABLE_AUTOUPDATER\": \"1\",
    \"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC\": \"1\"}"
}
# _img_lat_lines FILE: its number of lines in the bed (0 when missing).
_img_lat_lines() { in_c sh -c "cat '$1' 2>/dev/null | wc -l"; }
# _img_lat_egress NAME PORT: the egress journal's lines of NAME's connections to the bed's
# stand-in (Claude's requests to api.anthropic.com, refused, are there in both modes).
_img_lat_egress() {
  in_c journalctl -u hive-c0re-egress AGENT="$1" --no-pager -o cat |
    grep -c "egress to 127\.0\.0\.2:$2:" || true
}

# _img_lat_block NAME MODE URL PORT: deploy URL as NAME's API (restarting it), in the direct
# mode start the stand-in inside h-NAME as the harness's user, then time TB_IMG_LAT_TURNS turns
# (turn_latency.py's lines, appended to $TB_DIR/lat-MODE). Checks where the requests went: the
# in-container stand-in's log and the bed's (on PORT), and the egress journal.
_img_lat_block() {
  local n=$1 mode=$2 url=$3 port=$4 state=/var/lib/hyperhive/agents/$1 bed_log egress inside
  _cr_deploy_key "$n" environment "$(_img_lat_env "$url")"
  tb_wait_machine 120 "h-$n" hive-agent.service ||
    { in_c journalctl -M "h-$n" -u hive-agent --no-pager -n 30; return 1; }
  wait_for 30 "$n's login state (logged in)" _img_logged_in "$n"
  if [ "$mode" = direct ]; then
    in_c rm -f "$state/tb-direct.port"
    in_c systemd-run -M "h-$n" -q --collect --unit=tb-direct-api -p User=agent \
      -E STANDIN_PORT="$TB_IMG_DIRECT" /usr/bin/python3 /var/lib/hive/tb-standin.py \
      /var/lib/hive/tb-direct.port /var/lib/hive/tb-direct.log operator "$TB_IMG_REPLY"
    wait_for 10 "the stand-in in h-$n" in_c test -s "$state/tb-direct.port"
  fi
  bed_log=$(_img_lat_lines /run/tb-api.log)
  inside=$(_img_lat_lines "$state/tb-direct.log")
  egress=$(_img_lat_egress "$n" "$port")
  if ! "$TB_PYTHON" "$HERE/turn_latency.py" "$TB_DIR/host.sock" "$n" "$TB_IMG_REPLY" \
    "$TB_IMG_LAT_TURNS" >"$TB_DIR/lat-block"; then
    sed "s/^/  $mode: /" "$TB_DIR/lat-block"
    in_c journalctl -M "h-$n" -u hive-agent --no-pager -n 30
    in_c tail -n 6 /run/tb-api.log "$state/tb-direct.log"; return 1
  fi
  sed "s/^/  $mode: /" "$TB_DIR/lat-block"
  cat "$TB_DIR/lat-block" >>"$TB_DIR/lat-$mode"
  if [ "$mode" = direct ]; then
    # Two requests or more a turn (the tool call, its result) reached the stand-in on the
    # container's loopback; none the bed's, and the proxy relayed none to it.
    expect_eq "the bed's stand-in's requests during the direct turns" "$bed_log" \
      "$(_img_lat_lines /run/tb-api.log)"
    expect_eq "the egress journal's lines of $n during the direct turns" "$egress" \
      "$(_img_lat_egress "$n" "$port")"
    (( $(_img_lat_lines "$state/tb-direct.log") >= inside + 2 * TB_IMG_LAT_TURNS )) || {
      echo "the in-container stand-in's log: $(_img_lat_lines "$state/tb-direct.log") lines, was $inside"
      return 1
    }
  else
    (( $(_img_lat_lines /run/tb-api.log) >= bed_log + 2 * TB_IMG_LAT_TURNS )) || {
      echo "the bed's stand-in's log: $(_img_lat_lines /run/tb-api.log) lines, was $bed_log"
      return 1
    }
    expect_eq "the in-container stand-in's requests during the proxy turns" "$inside" \
      "$(_img_lat_lines "$state/tb-direct.log")"
    (( $(_img_lat_egress "$n" "$port") > egress )) ||
      { echo "no new egress journal line of $n during the proxy turns"; return 1; }
  fi
}

# _img_lat_median FILE COLUMN: the median of COLUMN of FILE's lines.
_img_lat_median() {
  "$TB_PYTHON" -c 'import statistics, sys
print(round(statistics.median(float(l.split()[int(sys.argv[2]) - 1]) for l in open(sys.argv[1]))))' "$1" "$2"
}

a_turn_through_the_egress_proxy_costs_about_what_a_direct_turn_costs() {
  local tar port n=imglat mode proxy direct np nd
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_agents "$n"
  _img_api_stand_ins
  port=$TB_IMG_API_PORT
  tb_hive "{\"stop_deadline_secs\": 2, \"template_image\": \"hive-image\", \"bind_host_usr\": false,
    \"egress_allow\": [\"127.0.0.2:$port\"]}"
  _img_spawn "$n" >/dev/null
  cp "$TB_REPO/tests/clients/messages_standin.py" \
    "/proc/$(tb_leader)/root/var/lib/hyperhive/agents/$n/tb-standin.py"
  in_c chmod 0644 "/var/lib/hyperhive/agents/$n/tb-standin.py"
  rm -f "$TB_DIR/lat-proxy" "$TB_DIR/lat-direct"
  for mode in proxy direct proxy direct; do
    if [ "$mode" = proxy ]; then
      _img_lat_block "$n" proxy "http://127.0.0.2:$port" "$port"
    else
      _img_lat_block "$n" direct "http://127.0.0.1:$TB_IMG_DIRECT" "$port"
    fi
  done
  proxy=$(_img_lat_median "$TB_DIR/lat-proxy" 1); np=$(wc -l < "$TB_DIR/lat-proxy")
  direct=$(_img_lat_median "$TB_DIR/lat-direct" 1); nd=$(wc -l < "$TB_DIR/lat-direct")
  echo "figure: turn latency, image agent, real Claude Code CLI against a stand-in:" \
    "through the hive's egress proxy p50 $proxy ms ($np), direct on the container's loopback" \
    "p50 $direct ms ($nd) (proxy/direct = $(awk -v a="$proxy" -v b="$direct" \
      'BEGIN { printf "%.2f", a / b }')x)"
  echo "figure: the same turns' own duration in the turn journal: through the proxy p50" \
    "$(_img_lat_median "$TB_DIR/lat-proxy" 2) ms, direct p50" \
    "$(_img_lat_median "$TB_DIR/lat-direct" 2) ms;" \
    "send to the reply in the inbox: p50 $(_img_lat_median "$TB_DIR/lat-proxy" 3) ms against" \
    "$(_img_lat_median "$TB_DIR/lat-direct" 3) ms"
}
