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

# Issue 44: the bed's /etc/hosts plays the attacker's DNS. Each name is under *.evil.test, which
# the hive grants at the stand-ins' port; every address they resolve to is refused by the proxy
# before it dials (the private and link-local ones never see a packet).
_EG_EVIL_HOSTS='127.0.0.1 loop.evil.test
127.0.0.2 stand-in.evil.test
0.0.0.0 zero.evil.test
::1 v6loop.evil.test
10.1.2.3 private.evil.test
169.254.169.254 metadata.evil.test
::ffff:169.254.169.254 mapped.evil.test'

# _eg_evil_hive NAME...: the hive granting 127.0.0.2:ALLOWED and *.evil.test:ALLOWED, NAME...
# spawned, the stand-ins up and the bed's hosts file naming the attacker's addresses (restored
# on exit).
_eg_evil_hive() {
  TB_ISO_CONFIG="\"egress_allow\": [\"127.0.0.2:$TB_EG_ALLOWED\", \"169.254.169.254:$TB_EG_ALLOWED\", \"*.evil.test:$TB_EG_ALLOWED\"]" \
    _iso_hive "$@"
  _eg_stand_ins
  in_c sh -c 'touch /etc/hosts; cp /etc/hosts /etc/hosts.tb-egress'
  printf '%s\n' "$_EG_EVIL_HOSTS" | in_c sh -c 'cat >> /etc/hosts'
  trap 'in_c sh -c "mv /etc/hosts.tb-egress /etc/hosts" || true
        in_c systemctl stop tb-egress-stand-in 2>/dev/null || true; tb_forget_agents' EXIT
}

# shellcheck disable=SC2016  # the probe's $ are the agent's
an_allow_listed_name_resolving_to_loopback_private_or_link_local_addresses_is_refused_naming_the_address() {
  _eg_evil_hive egdns
  # The bed itself resolves them as the egress service will.
  expect_match "the bed's resolver (the attacker's DNS)" '^127\.0\.0\.1 ' \
    "$(in_c getent hosts loop.evil.test)"
  local out name
  out=$(_iso_probe egdns "$_EG_FETCH"'
for name in loop stand-in zero v6loop private metadata mapped; do
  _fetch proxy http://$name.evil.test:'"$TB_EG_ALLOWED"'/
done
_fetch proxy http://127.0.0.2:'"$TB_EG_ALLOWED"'/
_fetch proxy http://169.254.169.254:'"$TB_EG_ALLOWED"'/')
  echo "$out" | sed 's/^/  /'
  local p=$TB_EG_ALLOWED
  for name in "loop 127\.0\.0\.1, a loopback" "stand-in 127\.0\.0\.2, a loopback" \
      "zero 0\.0\.0\.0, an unspecified \(this-network\)" "v6loop ::1, a loopback" "private 10\.1\.2\.3, a private" \
      "metadata 169\.254\.169\.254, a link-local" \
      "mapped (::ffff:)?169\.254\.169\.254, (the IPv4-mapped form of 169\.254\.169\.254, )?a link-local"; do
    expect_match "${name%% *}.evil.test through the proxy" \
      "^proxy http://${name%% *}\.evil\.test:$p/ HTTP 403 .*${name%% *}\.evil\.test:$p resolved to ${name#* } address.* grant its IP literal" \
      "$(grep "^proxy http://${name%% *}\.evil\.test" <<<"$out")"
  done
  # The operator's IP literal of the same stand-in still works: the exception is the literal.
  expect_eq "the granted IP literal" "proxy http://127.0.0.2:$p/ OK stand-in $p" \
    "$(grep '^proxy http://127' <<<"$out")"
  # But no list opens the metadata service, even by its literal (it used to be dialled).
  expect_match "the listed metadata literal through the proxy" \
    "^proxy http://169\.254\.169\.254:$p/ HTTP 403 .*169\.254\.169\.254:$p is a link-local address" \
    "$(grep '^proxy http://169' <<<"$out")"
  expect_match "the egress service's journal names the address (AGENT=egdns)" \
    "egdns: egress to metadata\.evil\.test:$p refused \(metadata\.evil\.test:$p resolved to 169\.254\.169\.254, a link-local" \
    "$(in_c journalctl -u hive-c0re-egress AGENT=egdns --no-pager -o cat)"
}

# _eg_filter_said: the egress service's line about IPAddressDeny= since the test began.
_eg_filter_said() {
  in_c journalctl -u hive-c0re-egress ${TB_CURSOR:+--after-cursor="$TB_CURSOR"} --no-pager -o cat |
    grep 'IPAddressDeny=' | tail -1 | grep .
}

# The unit's IPAddressDeny= is a second wall that systemd drops without cgroup BPF. The service
# probes its sentinel (127.0.0.253:9, loopback) at start and says what it found; the test runs
# the same probe under a transient unit with the same directive and checks the two agree.
the_egress_services_journal_says_whether_ip_address_deny_is_enforced_as_a_probe_finds_it() {
  in_c systemctl start hive-c0re-egress.socket hive-c0re-egress.service
  local probe said
  probe=$(in_c systemd-run --wait --pipe -q -p IPAddressDeny=127.0.0.253/32 "$TB_PYTHON" -c '
import errno, socket
s = socket.socket()
s.settimeout(1)
try:
    s.connect(("127.0.0.253", 9))
    print("connected")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e)))')
  wait_for 5 "the egress service's probe line" _eg_filter_said
  said=$(_eg_filter_said)
  echo "  probe under IPAddressDeny=127.0.0.253/32: $probe"
  echo "  egress service: $said"
  case $probe in
    EPERM|EACCES)
      expect_match "the service's line (the filter holds)" '^IPAddressDeny= is enforced on this host' "$said" ;;
    *)
      expect_eq "the service's line (the filter is dropped)" \
        "IPAddressDeny= is not enforced on this host (no cgroup BPF): the proxy's own address check is the only wall" \
        "$said" ;;
  esac
}

# (No `| grep -q`: under pipefail journalctl's SIGPIPE would fail the pipe.)
_eg_flooding() { [[ $(in_c journalctl -u hive-c0re-egress AGENT=egfl -o cat) == *"(429)"* ]]; }

# One agent's flood of 2,000 connections (the issue's attack pushed ~38,000 lines past
# journald's limit): it gets 429s past its connection rate, its journal lines stop at its
# budget with a summary of the rest, and another agent's refusal during the flood and the
# flooder's own allowed request after it are in the journal.
# shellcheck disable=SC2016
one_agents_connection_flood_leaves_another_agents_refusal_and_its_own_later_allowed_request_in_the_journal() {
  TB_ISO_CONFIG="\"egress_allow\": [\"127.0.0.2:$TB_EG_ALLOWED\"]" _iso_hive egfl egbob
  _eg_stand_ins
  local flood_out=$TB_DIR/egfl-flood.out out lines
  _iso_probe egfl "$_EG_FETCH"'
python3 - <<PY
import os, socket, collections
host, port = os.environ["http_proxy"].rsplit("/", 1)[-1].split(":")
seen = collections.Counter()
for _ in range(2000):
    try:
        s = socket.create_connection((host, int(port)), 5)
        s.sendall(b"GET http://127.0.0.2:'"$TB_EG_OTHER"'/ HTTP/1.1\r\nHost: x\r\n\r\n")
        seen[s.recv(64).split(b" ")[1].decode()] += 1
        s.close()
    except (OSError, IndexError):
        seen["error"] += 1
print("flood", " ".join("%s=%d" % kv for kv in sorted(seen.items())))
PY
sleep 2
_fetch proxy http://127.0.0.2:'"$TB_EG_ALLOWED"'/' >"$flood_out" &
  local flooder=$!
  wait_for 30 "egfl's flood under way" _eg_flooding
  out=$(_iso_probe egbob "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  wait "$flooder"
  sed 's/^/  /' "$flood_out"
  echo "$out" | sed 's/^/  /'
  expect_match "the flood was answered 429 past the rate" '^flood .*429=[0-9]+' "$(grep '^flood ' "$flood_out")"
  expect_eq "egfl's allowed request after the flood" \
    "proxy http://127.0.0.2:$TB_EG_ALLOWED/ OK stand-in $TB_EG_ALLOWED" "$(grep '^proxy ' "$flood_out")"
  expect_match "egbob's refusal during the flood" "^proxy .* HTTP 403 " "$(grep '^proxy ' <<<"$out")"
  sleep 1.5   # the sweep writes a summary left due
  local journal
  journal=$(in_c journalctl -u hive-c0re-egress AGENT=egfl --no-pager -o cat)
  lines=$(wc -l <<<"$journal")
  echo "  egfl's journal lines for 2,000 connections: $lines"
  grep 'suppressed' <<<"$journal" | sed 's/^/  /'
  [ "$lines" -lt 600 ] || { echo "egfl wrote $lines journal lines: no per-agent budget"; return 1; }
  expect_match "egfl's summary of suppressed lines" \
    "^egfl: [0-9]+ egress log lines suppressed \(.*refused to 127\.0\.0\.2:$TB_EG_OTHER" \
    "$(grep 'suppressed' <<<"$journal")"
  expect_match "egfl's later allowed request in the journal" \
    "egfl: egress to 127\.0\.0\.2:$TB_EG_ALLOWED: [0-9]+ bytes out" "$journal"
  expect_match "egbob's refusal in the journal" \
    "egbob: egress to 127\.0\.0\.2:$TB_EG_OTHER refused" \
    "$(in_c journalctl -u hive-c0re-egress AGENT=egbob --no-pager -o cat)"
}

# Issue 44, the audit in the hive's own store: an agent allowed one host and refused another sees
# both in `hivectl egress-log`, each with its verdict, and another agent's flood of 2,000
# connections to 2,000 targets (every one a row if nothing counted or bounded them) leaves them
# there: the flooder's rows stop at its own bound, its 429s counted into a row.
# shellcheck disable=SC2016  # the probe's $ are the agent's
an_agents_egress_is_in_hivectl_egress_log_and_another_agents_flood_leaves_it_there() {
  TB_ISO_CONFIG="\"egress_allow\": [\"127.0.0.2:$TB_EG_ALLOWED\"], \"egress_audit_rows_per_agent\": 100" \
    _iso_hive egau egfld
  _eg_stand_ins
  local out log rows
  out=$(_iso_probe egau "$_EG_FETCH"'
_fetch proxy http://127.0.0.2:'"$TB_EG_ALLOWED"'/
_fetch proxy http://127.0.0.2:'"$TB_EG_OTHER"'/')
  echo "$out" | sed 's/^/  /'
  expect_eq "egau's allowed request" "proxy http://127.0.0.2:$TB_EG_ALLOWED/ OK stand-in $TB_EG_ALLOWED" \
    "$(grep "^proxy http://127.0.0.2:$TB_EG_ALLOWED/" <<<"$out")"
  expect_match "egau's refused request" "^proxy .* HTTP 403 " "$(grep "^proxy http://127.0.0.2:$TB_EG_OTHER/" <<<"$out")"
  sleep 1   # the audit writes every 250 ms
  log=$(hivectl_root egress-log egau)
  echo "$log" | sed 's/^/  /'
  local a="127\.0\.0\.2:$TB_EG_ALLOWED" o="127\.0\.0\.2:$TB_EG_OTHER"
  expect_match "egau's allowed connection in egress-log" "^[0-9TZ:-]+ +allowed +$a +$a +[0-9]+ +[0-9]+ " "$log"
  expect_match "egau's refusal in egress-log" "^[0-9TZ:-]+ +refused +$o +- .*not on its allow-list" "$log"
  _iso_probe egfld '
python3 - <<PY
import os, socket, collections
host, port = os.environ["http_proxy"].rsplit("/", 1)[-1].split(":")
seen = collections.Counter()
for n in range(2000):
    try:
        s = socket.create_connection((host, int(port)), 5)
        s.sendall(b"GET http://t%d.flood.test:80/ HTTP/1.1\r\nHost: x\r\n\r\n" % n)
        seen[s.recv(64).split(b" ")[1].decode()] += 1
        s.close()
    except (OSError, IndexError):
        seen["error"] += 1
print("flood", " ".join("%s=%d" % kv for kv in sorted(seen.items())))
PY' | sed 's/^/  /'
  sleep 1
  rows=$(hivectl_root --json egress-log egfld -n 10000 | "$TB_PYTHON" -c 'import json, sys
rows = json.load(sys.stdin)["egress_log"]
limited = sum(r["count"] for r in rows if r["verdict"] == "limited")
print(len(rows), "rows,", limited, "counted 429s")')
  echo "figure: egfld's audit after 2,000 connections (bound 100): $rows"
  expect_match "egfld's rows stop at its bound, its 429s counted" "^(100|[1-9][0-9]?) rows, [1-9][0-9]* counted 429s$" "$rows"
  log=$(hivectl_root egress-log egau)
  expect_match "egau's allowed connection after the flood" "^[0-9TZ:-]+ +allowed +$a +$a " "$log"
  expect_match "egau's refusal after the flood" "^[0-9TZ:-]+ +refused +$o " "$log"
}
