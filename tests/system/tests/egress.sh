# shellcheck shell=bash
# Issue 27, egress: attacked from where the attacker sits, a command Claude's Bash tool would
# run (a child of `hive-agent run` in a spawned agent, through isolation.sh's probe template),
# with the environment the harness gives Claude (HTTPS_PROXY/HTTP_PROXY at its forwarder).
# The bed plays the internet: HTTP stand-ins on 127.0.0.2 (not 127.0.0.1, which NO_PROXY
# keeps direct, i.e. the container's own loopback). The path: the forwarder in the container,
# the agent's /run/hive/egress.sock, the daemon, hive-c0re-egress.service (shipped units).

TB_EG_ALLOWED=47021     # on the allow-list
TB_EG_OTHER=47022       # not on it, until granted

# _eg_stand_ins: an HTTP server on 127.0.0.2 at both ports answering "stand-in <port>".
_eg_stand_ins() {
  in_c systemd-run -q --collect --unit=tb-egress-stand-in "$TB_PYTHON" -c "
import http.server, socketserver, threading
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ('stand-in %d\n' % self.server.server_address[1]).encode()
        self.send_response(200); self.send_header('Content-Length', str(len(body)))
        self.end_headers(); self.wfile.write(body)
    def log_message(self, *a): pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
servers = [socketserver.ThreadingTCPServer(('127.0.0.2', p), H) for p in ($TB_EG_ALLOWED, $TB_EG_OTHER)]
for s in servers[1:]: threading.Thread(target=s.serve_forever, daemon=True).start()
servers[0].serve_forever()"
  trap 'in_c systemctl stop tb-egress-stand-in 2>/dev/null || true; tb_forget_agents' EXIT
  wait_for 5 "the bed's stand-ins" in_c "$TB_PYTHON" -c "
import urllib.request
urllib.request.urlopen('http://127.0.0.2:$TB_EG_ALLOWED/', timeout=1)"
}

# _eg_hive NAME: the hive allowing the first stand-in, NAME spawned, the stand-ins up.
_eg_hive() {
  TB_ISO_CONFIG="\"egress_allow\": [\"api.anthropic.com:443\", \"127.0.0.2:$TB_EG_ALLOWED\"]" _iso_hive "$1"
  _eg_stand_ins
}

# The probe's fetches: through the proxy the environment names (urllib reads http_proxy),
# and straight to the address, bypassing it.
_EG_FETCH='
_fetch() {
python3 - "$1" "$2" <<PY
import sys, urllib.request, urllib.error, socket
how, url = sys.argv[1], sys.argv[2]
opener = urllib.request.build_opener() if how == "proxy" else urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    print(how, url, "OK", opener.open(url, timeout=10).read().decode().strip())
except urllib.error.HTTPError as e:
    print(how, url, "HTTP", e.code, e.read().decode().strip().replace("\n", " "))
except OSError as e:
    print(how, url, "refused:", e.__class__.__name__)
PY
}'

# shellcheck disable=SC2016  # the probe's $ are the agent's
an_agents_shell_reaches_an_allow_listed_host_through_the_hive_and_nothing_directly() {
  _eg_hive egok
  local out
  out=$(_iso_probe egok "$_EG_FETCH"'
echo "proxy-env $HTTPS_PROXY $http_proxy $NO_PROXY"
_fetch proxy http://127.0.0.2:'"$TB_EG_ALLOWED"'/
_fetch direct http://127.0.0.2:'"$TB_EG_ALLOWED"'/
python3 -c "
import socket
try:
    print(\"dns\", socket.getaddrinfo(\"api.anthropic.com\", 443)[0][4])
except OSError as e:
    print(\"dns refused:\", e.__class__.__name__)"
stat -c "egress-socket %U %a" /run/hive/egress.sock')
  echo "$out" | sed 's/^/  /'
  expect_match "the harness's proxy variables" \
    '^proxy-env http://127\.0\.0\.1:[0-9]+ http://127\.0\.0\.1:[0-9]+ localhost,127\.0\.0\.1,::1$' \
    "$(grep '^proxy-env ' <<<"$out")"
  expect_eq "the allow-listed stand-in through the proxy" \
    "proxy http://127.0.0.2:$TB_EG_ALLOWED/ OK stand-in $TB_EG_ALLOWED" "$(grep '^proxy ' <<<"$out")"
  expect_match "the same stand-in, bypassing the proxy" '^direct .* refused' "$(grep '^direct ' <<<"$out")"
  expect_match "a DNS lookup in the container" '^dns refused' "$(grep '^dns' <<<"$out")"
  expect_eq "the egress socket inside" "egress-socket agent 600" "$(grep '^egress-socket ' <<<"$out")"
  # The allowed connection is logged by the egress service, with the agent's name.
  expect_match "the egress service's journal line (AGENT=egok)" \
    "egok: egress to 127\.0\.0\.2:$TB_EG_ALLOWED: [0-9]+ bytes out" \
    "$(in_c journalctl -u hive-c0re-egress AGENT=egok --no-pager -o cat)"
}

# shellcheck disable=SC2016
a_host_off_the_list_is_refused_with_a_403_and_a_journal_line_naming_agent_and_host() {
  _eg_hive egno
  local out
  out=$(_iso_probe egno "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  echo "$out" | sed 's/^/  /'
  expect_match "the stand-in off the list, through the proxy" \
    "^proxy http://127.0.0.2:$TB_EG_OTHER/ HTTP 403 .*127\.0\.0\.2:$TB_EG_OTHER is not on agent egno's allow-list" \
    "$(grep '^proxy ' <<<"$out")"
  expect_match "the egress service's journal line (AGENT=egno)" \
    "egno: egress to 127\.0\.0\.2:$TB_EG_OTHER refused" \
    "$(in_c journalctl -u hive-c0re-egress AGENT=egno --no-pager -o cat)"
}

# The agent asks for a host with its own tool (as Claude would call request_egress), the
# operator approves with hivectl, and the next request reaches it; a revoke closes it again.
# shellcheck disable=SC2016
after_request_egress_and_approve_the_host_is_reachable_until_revoked() {
  _eg_hive egask
  local out id
  out=$(_iso_probe egask "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/
/usr/local/bin/hive-agent call request_egress "{\"host\":\"127.0.0.2:'"$TB_EG_OTHER"'\",\"reason\":\"the tier test\"}" \
  >/dev/null && echo "asked ok" || echo "asked FAILED"')
  echo "$out" | sed 's/^/  /'
  expect_match "before: the host off the list" "^proxy .* HTTP 403 " "$(grep '^proxy ' <<<"$out")"
  expect_eq "request_egress from the agent's shell" "asked ok" "$(grep '^asked ' <<<"$out")"
  expect_match "the operator's pending list" "egress.*egask|egask.*egress" "$(hivectl_root pending)"
  # Its own row: an earlier test of the bed may have left another pending.
  id=$(hivectl_root --json pending | "$TB_PYTHON" -c 'import json, sys
print(next(a["id"] for a in json.load(sys.stdin)["approvals"]
           if a["kind"] == "egress" and a["agent"] == "egask" and a["status"] == "pending"))')
  hivectl_root approve "$id" >/dev/null
  out=$(_iso_probe egask "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  echo "$out" | sed 's/^/  /'
  expect_eq "after approval: the host through the proxy" \
    "proxy http://127.0.0.2:$TB_EG_OTHER/ OK stand-in $TB_EG_OTHER" "$(grep '^proxy ' <<<"$out")"
  hivectl_root revoke egask --egress "127.0.0.2:$TB_EG_OTHER" >/dev/null
  out=$(_iso_probe egask "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  expect_match "after the revoke" "^proxy .* HTTP 403 " "$(grep '^proxy ' <<<"$out")"
}

# The agent's reviewed agent.json opens a host (issue 27): deployed through the manager socket
# and an approval (config_repos.sh's _cr_deploy_key), it is reachable; rolled back, refused.
# shellcheck disable=SC2016
a_host_in_the_deployed_agent_json_is_reachable_through_the_proxy_until_rolled_back() {
  _eg_hive egcfg
  local out
  out=$(_iso_probe egcfg "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  expect_match "before: the host off the list" "^proxy .* HTTP 403 " "$(grep '^proxy ' <<<"$out")"
  _cr_deploy_key egcfg egress "[\"127.0.0.2:$TB_EG_OTHER\"]"
  tb_wait_machine 60 h-egcfg hive-agent.service
  out=$(_iso_probe egcfg "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  expect_eq "deployed: the host through the proxy" \
    "proxy http://127.0.0.2:$TB_EG_OTHER/ OK stand-in $TB_EG_OTHER" "$(grep '^proxy ' <<<"$out")"
  expect_eq "hivectl grants (agent.json's hosts are not grants)" "" \
    "$(hivectl_root grants egcfg | grep -F "127.0.0.2:$TB_EG_OTHER" || true)"
  hivectl_root rollback egcfg 0 >/dev/null 2>&1 || true
  tb_wait_machine 60 h-egcfg hive-agent.service
  out=$(_iso_probe egcfg "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  expect_match "rolled back: refused again" "^proxy .* HTTP 403 " "$(grep '^proxy ' <<<"$out")"
}
