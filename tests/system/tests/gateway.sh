# shellcheck shell=bash
# Issue 46, the model gateway, step 1: an agent of the built image runs the real Claude Code CLI
# with nothing of its own — no key, no base URL in its agent.json: the harness gives Claude
# ANTHROPIC_BASE_URL at its forwarder and a sentinel credential, and the gateway in
# hive-c0re-egress.service puts the host's key (a systemd credential, LoadCredential= in a
# drop-in) in its place and forwards over TLS to a stand-in of the Messages API on 127.0.0.2,
# whose certificate only the gateway trusts (HIVE_MODEL_CA: the test CA of
# tests/support/gateway). The stand-in is off every allow-list (egress_allow is empty by
# default): the gateway is the only way to it.

TB_GW_DIR=/run/tb-gateway                       # in the bed: certificates, the key, the log
TB_GW_DROPIN=/run/systemd/system/hive-c0re-egress.service.d

# _gw_up: the TLS stand-in on 127.0.0.2 (its answers' model: TB_GW_MODEL, default one no
# price table knows), a fresh key as the host's credential `anthropic`, the egress service's
# drop-in; sets TB_GW_PORT and TB_GW_KEY.
_gw_up() {
  local root
  root="/proc/$(tb_leader)/root"
  in_c rm -rf "$TB_GW_DIR"
  in_c mkdir -p -m 0755 "$TB_GW_DIR"
  cp "$TB_REPO/tests/support/gateway/ca.pem" "$TB_REPO/tests/support/gateway/server.pem" \
    "$TB_REPO/tests/support/gateway/server.key" "$TB_REPO/tests/clients/messages_standin.py" \
    "$root$TB_GW_DIR/"
  TB_GW_KEY="sk-ant-api03-tb-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  in_c sh -c "umask 077; printf '%s\n' '$TB_GW_KEY' > $TB_GW_DIR/anthropic.key"
  in_c systemd-run -q --collect --unit=tb-gateway-stand-in -E STANDIN_HOST=127.0.0.2 \
    -E STANDIN_MODEL="${TB_GW_MODEL:-claude-standin-1}" \
    -E STANDIN_TLS_CERT="$TB_GW_DIR/server.pem" -E STANDIN_TLS_KEY="$TB_GW_DIR/server.key" \
    "$TB_PYTHON" "$TB_GW_DIR/messages_standin.py" "$TB_GW_DIR/api.port" "$TB_GW_DIR/api.log" \
    operator "hello through the gateway"
  trap 'in_c systemctl stop tb-gateway-stand-in 2>/dev/null || true
    in_c rm -rf "$TB_GW_DROPIN" "$TB_GW_DIR"; in_c systemctl daemon-reload; tb_forget_agents' EXIT
  wait_for 10 "the TLS stand-in's port" in_c test -s "$TB_GW_DIR/api.port"
  TB_GW_PORT=$(in_c cat "$TB_GW_DIR/api.port")
  in_c mkdir -p "$TB_GW_DROPIN"
  printf '[Service]\nLoadCredential=anthropic:%s/anthropic.key\nEnvironment=HIVE_MODEL_UPSTREAM=https://127.0.0.2:%s HIVE_MODEL_CA=%s/ca.pem\n' \
    "$TB_GW_DIR" "$TB_GW_PORT" "$TB_GW_DIR" | in_c sh -c "cat > $TB_GW_DROPIN/tb-gateway.conf"
  in_c systemctl daemon-reload
  in_c systemctl stop hive-c0re-egress.service 2>/dev/null || true
}

_gw_inbox_has() { hivectl_root inbox | grep -qF -- "$1"; }
_gw_audit_has_model() { hivectl_root --json egress-log "$1" -n 1000 | grep -q '"verdict":"model"'; }
_gw_turn_ok() { hivectl_root turns "$1" | grep -q ' ok'; }

# shellcheck disable=SC2016  # the scripts' $ are the agent's
a_real_claude_turn_goes_through_the_gateway_with_the_hosts_key_and_is_metered_and_no_key_is_inside() {
  local tar log n rows in_sum out_sum hits environ probe
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_agents gwy
  _gw_up
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-image", "bind_host_usr": false,
    "model_credential": "anthropic"}'
  _img_spawn gwy >/dev/null
  tb_wait_machine 120 h-gwy hive-agent.service ||
    { in_c journalctl -M h-gwy -u hive-agent --no-pager -n 30; return 1; }
  # The host holds the credential: the roster never says the agent needs a login.
  wait_for 30 "gwy's login state (logged in)" _img_logged_in gwy

  hivectl_root send gwy "please greet the operator"
  wait_for 120 "gwy's reply through its send tool" _gw_inbox_has "hello through the gateway" ||
    { in_c journalctl -M h-gwy -u hive-agent --no-pager -n 40; in_c journalctl -u hive-c0re-egress \
      --no-pager -n 20; in_c cat "$TB_GW_DIR/api.log"; return 1; }
  wait_for 60 "gwy's turn in the journal" _gw_turn_ok gwy ||
    { hivectl_root turns gwy; in_c journalctl -M h-gwy -u hive-agent --no-pager -n 40
      in_c cat "$TB_GW_DIR/api.log"; hivectl_root model-log gwy; return 1; }

  # The stand-in saw the host's key on every request, never the sentinel or another credential.
  log=$(in_c cat "$TB_GW_DIR/api.log")
  n=$(grep -c '"path": "/v1/messages' <<<"$log")
  echo "  the stand-in saw $n requests"
  expect_ne "requests at the stand-in" 0 "$n"
  expect_eq "requests carrying the host's key" "$n" "$(grep -cF "\"x_api_key\": \"$TB_GW_KEY\"" <<<"$log")"
  expect_eq "requests with an Authorization header" 0 "$(grep -vc '"authorization": null' <<<"$log" || true)"
  expect_eq "requests carrying the sentinel" 0 "$(grep -c 'hive-sentinel' <<<"$log" || true)"

  # Metered: the tokens the stand-in sent (10 in, 5 out per answered /v1/messages) are the rows'.
  rows=$(hivectl_root --json model-log gwy -n 1000)
  read -r in_sum out_sum < <("$TB_PYTHON" -c 'import json, sys
rows = [r["request"] for r in json.load(sys.stdin)["model_log"]]
print(sum(r["tokens"]["input"] for r in rows), sum(r["tokens"]["output"] for r in rows))' <<<"$rows")
  n=$(grep -c '"path": "/v1/messages[?"]' <<<"$log")
  expect_eq "metered input tokens (10 per answered request)" "$((10 * n))" "$in_sum"
  expect_eq "metered output tokens (5 per answered request)" "$((5 * n))" "$out_sum"
  hivectl_root model-log gwy | sed 's/^/  /'
  # The connections are the egress audit's too, as model ones (written when they end).
  wait_for 30 "gwy's model connections in its egress audit" _gw_audit_has_model gwy

  # No byte of the key in the container: every file under its root and its state, every
  # process's environment, and none in the hive's own state or journal either.
  in_c test -d /var/lib/machines/h-gwy/usr/local/bin -a -d /var/lib/hyperhive/agents/gwy/claude
  hits=$(in_c grep -rlaF -D skip -- "$TB_GW_KEY" /var/lib/machines/h-gwy /var/lib/hyperhive 2>/dev/null || true)
  expect_eq "files holding the key in the container, its state or the hive's state" "" "$hits"
  # (the same scan finds it where it is: the operator's file, and the stand-in's log)
  expect_match "the scan, where the key is" "$TB_GW_DIR/anthropic.key" \
    "$(in_c grep -rlaF -D skip -- "$TB_GW_KEY" "$TB_GW_DIR")"
  environ=$(in_c timeout 30 systemd-run -q -M h-gwy --wait -P sh -c \
    'for f in /proc/[0-9]*/environ; do tr "\0" "\n" < "$f"; done' 2>/dev/null)
  expect_match "the container's processes' environments (read: the harness's among them)" \
    'HIVE_TOOL_GROUPS=' "$environ"
  expect_eq "environments holding the key" 0 "$(grep -cF -- "$TB_GW_KEY" <<<"$environ" || true)"
  expect_eq "journal lines holding the key" 0 \
    "$(in_c journalctl --no-pager -o cat -m 2>/dev/null | grep -cF -- "$TB_GW_KEY" || true)"

  # From the agent's shell: the stand-in and api.anthropic.com straight are refused (the
  # container's network is its loopback), and through the egress proxy too (on no allow-list).
  probe=$(_img_as_agent gwy '
/usr/local/bin/hive-agent egress-forward --listen 127.0.0.1:3128 >/dev/null 2>&1 &
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.1; done
_try() { l=$1; shift; echo "$l $(curl -sS -o /dev/null --max-time 5 -w "%{http_code}" "$@" 2>&1 | tr "\n" " ")"; }
_try direct-standin --noproxy "*" https://127.0.0.2:'"$TB_GW_PORT"'/
_try direct-api --noproxy "*" https://api.anthropic.com/
_try proxy-api -x http://127.0.0.1:3128 https://api.anthropic.com/
_try proxy-standin -x http://127.0.0.1:3128 https://127.0.0.2:'"$TB_GW_PORT"'/
kill $!')
  echo "$probe" | sed 's/^/  /'
  expect_match "the stand-in straight from the agent's shell" '^direct-standin curl: \(7\)' \
    "$(grep '^direct-standin ' <<<"$probe")"
  expect_match "api.anthropic.com straight from the agent's shell" '^direct-api curl: \((6|7)\)' \
    "$(grep '^direct-api ' <<<"$probe")"
  expect_match "api.anthropic.com through the egress proxy" '^proxy-api .*CONNECT tunnel failed, response 403' \
    "$(grep '^proxy-api ' <<<"$probe")"
  expect_match "the stand-in through the egress proxy" '^proxy-standin .*CONNECT tunnel failed, response 403' \
    "$(grep '^proxy-standin ' <<<"$probe")"
}

# _gw_figures NAME: NAME's `usage` row (host.sock JSON) as "requests cost reported-turns
# reported-cost", then its budget's "spent reached" (or "- -") and its roster's spend today.
_gw_figures() {
  local usage budgets roster
  usage=$(hivectl_root --json usage)
  budgets=$(hivectl_root --json budget)
  roster=$(hivectl_root --json status)
  "$TB_PYTHON" -c 'import json, sys
name, usage, budgets, roster = sys.argv[1], *map(json.loads, sys.argv[2:])
row = next((r for r in usage["usage"] if r["key"] == name), {})
m = row.get("metered", {})
b = next((b for b in budgets["budgets"] if b.get("agent") == name), None)
a = next((a for a in roster["agent_statuses"] if a["name"] == name), {})
print(m.get("requests", 0), m.get("cost_micro_usd", 0), row.get("turns", 0), row.get("cost_micro_usd", 0),
      *((b["spent"], str(b["reached"]).lower()) if b else ("-", "-")), a.get("spent_today_micro_usd", "-"))' \
    "$1" "$usage" "$budgets" "$roster"
}
_gw_figures_are() { [ "$(_gw_figures "$1")" = "$2" ]; }

# From the agent's shell, as Claude's Bash tool runs: $N model requests of agent $A through a
# forwarder of its own (each metered 10 in and 5 out: at Haiku 4.5's list price, 35 millionths),
# each printing its answer's body, then `request <status>` on a line of its own.
# shellcheck disable=SC2016  # the script's $ are the agent's
TB_GW_ASK='
/usr/local/bin/hive-agent egress-forward --listen 127.0.0.1:3128 >/dev/null 2>&1 &
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/3128) 2>/dev/null && break; sleep 0.1; done
for i in $(seq "$N"); do
  curl -sS -w "\nrequest %{http_code}\n" --noproxy "*" http://127.0.0.1:3128/v1/messages \
    -H "x-api-key: hive-sentinel-h-$A" -H "content-type: application/json" \
    -d "{\"model\":\"claude-haiku-4-5\",\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
done
kill $!'

# shellcheck disable=SC2016  # the scripts' $ are the agent's
a_forged_report_turn_from_the_agents_shell_leaves_usage_and_the_budget_at_the_metered_spend() {
  local tar probe forged ask="A=gwm; $TB_GW_ASK"
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_agents gwm
  TB_GW_MODEL=claude-haiku-4-5 _gw_up
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-image", "bind_host_usr": false,
    "model_credential": "anthropic"}'
  _img_spawn gwm >/dev/null
  tb_wait_machine 120 h-gwm hive-agent.service ||
    { in_c journalctl -M h-gwm -u hive-agent --no-pager -n 30; return 1; }
  hivectl_root budget set gwm 0.0001usd/day

  # Two model requests from the agent's shell (metered), then `report_turn`s to its own socket
  # claiming $5 and $0 — each answered ok, as before.
  probe=$(_img_as_agent gwm "N=2; $ask")
  echo "$probe" | sed 's/^/  /'
  expect_eq "requests answered through the gateway" 2 "$(grep -c '^request 200' <<<"$probe")"
  wait_for 10 "the two requests metered and the budget evaluated" _gw_figures_are gwm "2 70 0 0 70 false 70" ||
    { _gw_figures gwm; hivectl_root model-log gwm; return 1; }
  forged=$(_img_as_agent gwm '
for cost in 5000000 0; do
python3 -c "import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(\"/run/hive/mcp.sock\")
s.sendall(sys.argv[1].encode() + b\"\\n\"); print(s.makefile().readline().strip())" \
  "{\"cmd\":\"report_turn\",\"turn\":{\"started_at_ms\":1,\"ended_at_ms\":2,\"outcome\":\"ok\",\"usage\":{\"input_tokens\":9000000},\"cost_micro_usd\":$cost}}"
done')
  echo "$forged" | sed 's/^/  /'
  expect_eq "forged reports answered ok (kept, as reported)" 2 "$(grep -c '"kind":"ok"' <<<"$forged")"
  expect_eq "gwm's figures: metered requests and cost, reported turns and cost, budget, today" \
    "2 70 2 5000000 70 false 70" "$(_gw_figures gwm)"
  hivectl_root usage | sed 's/^/  /'

  # A third request passes the budget's $0.0001: the meter, not a report, holds gwm.
  probe=$(_img_as_agent gwm "N=1; $ask")
  expect_eq "the third request answered" 1 "$(grep -c '^request 200' <<<"$probe")"
  wait_for 10 "the budget reached by the third request" _gw_figures_are gwm "3 105 2 5000000 105 true 105" ||
    { _gw_figures gwm; return 1; }
  expect_match "the roster says why" '\$0\.00011 of \$0\.0001 today' "$(hivectl_root status)"
}

_gw_held_row() {
  hivectl_root --json model-log "$1" -n 1000 | grep -q '"status":400,"tokens":{"input":0,"output":0'
}
_gw_standin_requests() { in_c cat "$TB_GW_DIR/api.log" | grep -c '"path": "/v1/messages[?"]' || true; }

# Issue 46, budgets enforced at the request: a budget of two requests, reached by them; the
# third request waits at the gateway (never reaching the stand-in) and, the budget not raised,
# is answered the budget's error after budget_hold_secs; a fourth waits the same, and raising
# the budget lets it through at once.
# shellcheck disable=SC2016  # the scripts' $ are the agent's
a_request_past_a_reached_budget_waits_at_the_gateway_until_the_budget_is_raised() {
  local tar probe took held raised ask="A=gwb; $TB_GW_ASK"
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_agents gwb
  TB_GW_MODEL=claude-haiku-4-5 _gw_up
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-image", "bind_host_usr": false,
    "model_credential": "anthropic", "budget_hold_secs": 8}'
  _img_spawn gwb >/dev/null
  tb_wait_machine 120 h-gwb hive-agent.service ||
    { in_c journalctl -M h-gwb -u hive-agent --no-pager -n 30; return 1; }
  hivectl_root budget set gwb 0.00007usd/day
  probe=$(_img_as_agent gwb "N=2; $ask")
  expect_eq "the two requests answered" 2 "$(grep -c '^request 200' <<<"$probe")"
  wait_for 10 "the budget reached by the two requests" _gw_figures_are gwb "2 70 0 0 70 true 70" ||
    { _gw_figures gwb; hivectl_root model-log gwb; return 1; }

  # Not raised: held for budget_hold_secs, then the budget's error, never forwarded.
  took=$SECONDS
  probe=$(_img_as_agent gwb "N=1; $ask")
  took=$((SECONDS - took))
  echo "$probe" | sed 's/^/  /'
  expect_eq "the held request's answer" 1 "$(grep -c '^request 400' <<<"$probe")"
  expect_match "its message names the budget" 'the budget 0.00007usd/day on gwb and under is reached' "$probe"
  expect_match "its message names the command that raises it" 'hivectl budget set gwb AMOUNT' "$probe"
  expect_eq "held at least budget_hold_secs (8 s)" true "$([ "$took" -ge 8 ] && echo true || echo false)"
  expect_eq "requests at the stand-in" 2 "$(_gw_standin_requests)"
  wait_for 10 "the held request's meter row (status 400, no tokens)" _gw_held_row gwb ||
    { hivectl_root model-log gwb; return 1; }

  # Raised while held: the request goes through at once (the push takes well under a second;
  # the bound below covers the agent's shell ending too).
  raised=$(mktemp)
  _img_as_agent gwb "N=1; $ask" >"$raised" 2>&1 &
  held=$!
  sleep 3
  expect_eq "requests at the stand-in while held" 2 "$(_gw_standin_requests)"
  hivectl_root budget set gwb 1usd/day
  took=$SECONDS
  wait "$held"
  took=$((SECONDS - took))
  sed 's/^/  /' "$raised"
  expect_eq "the request let through" 1 "$(grep -c '^request 200' "$raised")"
  rm -f "$raised"
  expect_eq "let through within 3 s of the raise" true "$([ "$took" -le 3 ] && echo true || echo false)"
  expect_eq "requests at the stand-in" 3 "$(_gw_standin_requests)"
  # The overshoot: what was spent past the budget's 70 millionths is what was in flight (none).
  echo "  gwb's figures (requests cost turns reported budget-spent reached today): $(_gw_figures gwb)"
}
