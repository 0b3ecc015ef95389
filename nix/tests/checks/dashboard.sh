# nix/tests/checks/dashboard.sh: the dashboard and its nginx virtual host.
# Sourced by nix/tests/run, in its order, with its helpers and variables.
# shellcheck shell=bash

# --- 5b. the dashboard ------------------------------------------------------------------
ev "$T/nodash.json" --arg settings "$(settings '{ enable = true; dashboard.enable = false; }')"
check "dashboard.enable = false masks hive-c0re-web.socket (the service's Wants= then pulls in nothing)" \
  jqt "$T/nodash.json" '.systemd.sockets["hive-c0re-web"].enable == false and (.units | has("hive-c0re-web.socket") | not)
    and .systemd.sockets["hive-c0re"].wantedBy == ["sockets.target"]'
check "the dashboard alone (no nginx) starts no nginx and adds no one to hive-admin" \
  jqt "$T/on.json" '.services.nginx.enable == false and .services.nginx.virtualHosts == {}'

NGINX_ON='{ enable = true; settings.domain = "hive.example.org"; dashboard.nginx = { enable = true; basicAuthFile = "/run/secrets/hive.htpasswd"; }; }'
ev "$T/nginx.json" --arg settings "$(settings "$NGINX_ON")"
if [ -e "$T/nginx.json" ]; then
  ok "the module evaluates (dashboard.nginx with basicAuthFile)"
  VHOST='.services.nginx.virtualHosts["hive.example.org"]'
  check "dashboard.nginx: nginx on, one virtual host named settings.domain" \
    jqt "$T/nginx.json" ".services.nginx.enable and (.services.nginx.virtualHosts | keys == [\"hive.example.org\"])"
  check "dashboard.nginx: every location proxies to unix:/run/hyperhive/web.sock, passing Host (recommendedProxySettings)" \
    jqt "$T/nginx.json" "($VHOST.locations | keys == [\"/\", \"/events/\"])
      and ($VHOST.locations | all(.proxyPass == \"http://unix:/run/hyperhive/web.sock\" and .recommendedProxySettings))"
  check "dashboard.nginx: the live updates (/events/) are not buffered, over HTTP/1.1" \
    jqt "$T/nginx.json" "$VHOST.locations[\"/events/\"].extraConfig | test(\"(^|\\n)proxy_buffering off;\")
      and test(\"(^|\\n)proxy_http_version 1.1;\")"
  check "dashboard.nginx: the rows' URLs (/agent/<name>/) are rewritten to the dashboard's /agent/<name>" \
    jqt "$T/nginx.json" "$VHOST.locations[\"/\"].extraConfig | test(\"rewrite \\\"\\\\^\\\\(/agent/\\\\[a-z0-9-\\\\]\\\\{1,63\\\\}\\\\)/\\\\$\\\" \\\\\$1 break;\")"
  check "dashboard.nginx: the whole virtual host asks for the password file (basicAuthFile at server level)" \
    jqt "$T/nginx.json" "$VHOST.basicAuthFile == \"/run/secrets/hive.htpasswd\" and ($VHOST.locations | all(.basicAuthFile == null))"
  check "dashboard.nginx: nginx's user joins hive-admin, the sockets' group (nginx is trusted)" \
    jqt "$T/nginx.json" '.users.groups["hive-admin"].members == ["nginx"]'
else
  bad "the module evaluates (dashboard.nginx with basicAuthFile)" "$(grep -v '^trace: ' "$T/nginx.json.err")"
fi
# The rendered virtual host in a real nginx (Debian's), in front of the real
# daemon (fake driver, web.sock bound by itself, root-only: nginx runs as
# root here, in one process; its membership of hive-admin is the check
# above). The listen line is the harness's (a Unix socket); the paths of
# web.sock and the password file are swapped for scratch ones.
# real_nginx NAME SERVER: SERVER (a file holding one `server { }` block) with
# its listen and certificate lines replaced by a Unix socket, web.sock and
# the password file by scratch ones.
real_nginx() {
  local dir=$T/real-nginx-$1 pid npid i rc=0 page token code sse
  mkdir -p "$dir/state" "$dir/run" "$dir/tmp"
  (umask 0077 && exec "$BIN/hive-c0re" serve --state-dir "$dir/state" --runtime-dir "$dir/run" --driver fake) >"$dir/daemon.log" 2>&1 &
  pid=$!
  for i in $(seq 200); do [ -S "$dir/run/web.sock" ] && [ -S "$dir/run/host.sock" ] && break; sleep 0.1; done
  HIVE_SOCKET=$dir/run/host.sock "$BIN/hivectl" spawn scout >"$dir/spawn.log" 2>&1 || rc=1
  printf 'alice:%s\n' "$(openssl passwd -6 right-password)" >"$dir/htpasswd"
  sed -e "s|/run/hyperhive/web.sock|$dir/run/web.sock|g" -e "s|auth_basic_user_file [^;]*;|auth_basic_user_file $dir/htpasswd;|" \
    -e '/^ *listen /d' -e '/^ *ssl_certificate/d' -e "0,/server {/s||server { listen unix:$dir/nginx.sock;|" "$2" >"$dir/server.conf"
  cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log $dir/error.log info;
events { }
http {
  access_log off;
  client_body_temp_path $dir/tmp/body;
  proxy_temp_path $dir/tmp/proxy;
  fastcgi_temp_path $dir/tmp/fastcgi;
  uwsgi_temp_path $dir/tmp/uwsgi;
  scgi_temp_path $dir/tmp/scgi;
  include $dir/server.conf;
}
CONF
  nginx -p "$dir" -c "$dir/nginx.conf" >"$dir/nginx.log" 2>&1 &
  npid=$!
  for i in $(seq 200); do [ -S "$dir/nginx.sock" ] && break; sleep 0.1; done
  # c ARGS...: curl through nginx, as a browser at https://hive.example.org
  c() { curl -sS --max-time 10 --unix-socket "$dir/nginx.sock" "$@"; }
  local base=http://hive.example.org auth=(-u alice:right-password)
  {
    code=$(c -o /dev/null -w '%{http_code}' "$base/") && [ "$code" = 401 ] ||
      { echo "GET / without a password: $code, want 401"; rc=1; }
    code=$(c -o /dev/null -w '%{http_code}' -u alice:wrong "$base/") && [ "$code" = 401 ] ||
      { echo "GET / with a wrong password: $code, want 401"; rc=1; }
    page=$(c "${auth[@]}" "$base/agent/scout/") && grep -q '<title>scout · hive</title>' <<<"$page" ||
      { echo "GET /agent/scout/ (the row's URL) is not scout's page: $(head -c 300 <<<"$page")"; rc=1; }
    token=$(grep -o 'name="csrf" value="[0-9a-f]*"' <<<"$page" | head -n1 | sed 's/.*value="//; s/"$//')
    # The SSE stream, open while scout is stopped: its row must come through at once.
    c "${auth[@]}" -N "$base/events/roster" >"$dir/sse" 2>&1 &
    sse=$!
    for i in $(seq 50); do grep -q '^event: ready' "$dir/sse" && break; sleep 0.1; done
    grep -q '^event: ready' "$dir/sse" || { echo "no 'ready' event through nginx within 5 s: $(cat "$dir/sse")"; rc=1; }
    code=$(c "${auth[@]}" -o /dev/null -w '%{http_code}' -H "Origin: https://evil.example" \
      --data-urlencode "csrf=$token" "$base/agent/scout/stop") && [ "$code" = 403 ] ||
      { echo "POST from another origin: $code, want 403"; rc=1; }
    code=$(c "${auth[@]}" -o "$dir/post" -w '%{http_code}' -H "Origin: https://hive.example.org" \
      -H "Sec-Fetch-Site: same-origin" --data-urlencode "csrf=$token" "$base/agent/scout/stop") && [ "$code" = 303 ] ||
      { echo "POST stop from the dashboard's origin through nginx: $code, want 303 (Host passed through?): $(cat "$dir/post")"; rc=1; }
    for i in $(seq 50); do grep -q '^event: row' "$dir/sse" && break; sleep 0.1; done
    grep -q '^event: row' "$dir/sse" || { echo "the stopped row did not come through nginx within 5 s (buffered?)"; rc=1; }
    kill "$sse" 2>/dev/null
  } 2>&1
  kill "$npid" "$pid" 2>/dev/null
  wait "$npid" "$pid" "$sse" 2>/dev/null
  [ "$rc" = 0 ] || { tail -n 5 "$dir/error.log" "$dir/daemon.log" "$dir/spawn.log"; return 1; }
}
if [ -e "$T/nginx.json" ] && [ -x "$BIN/hive-c0re" ] && [ -x "$BIN/hivectl" ] && [ "$(id -u)" -eq 0 ]; then
  jq -r '.nginxServers["hive.example.org"]' "$T/nginx.json" >"$T/nginx-nixos.conf"
  check "dashboard.nginx in a real nginx: password asked, /agent/<n>/ reaches the agent's page, forms pass the CSRF check (Host), a roster change arrives on /events/ at once" \
    real_nginx nixos "$T/nginx-nixos.conf"
  # The book's virtual host for Debian (docs/src/dashboard.md), as an operator pastes it.
  awk '/^```nginx/ { f = 1; next } f && /^```/ { exit } f { print }' docs/src/dashboard.md >"$T/nginx-readme.conf"
  check "the book's nginx virtual host for Debian does the same in a real nginx" real_nginx readme "$T/nginx-readme.conf"
else
  echo "skip - dashboard.nginx in a real nginx: needs root, $BIN/hive-c0re and hivectl"
fi
ev "$T/nginx-user.json" --arg settings "{ imports = [ $(settings "$NGINX_ON") ]; services.nginx.user = \"www\"; }"
check "dashboard.nginx: a different services.nginx.user is the one added to hive-admin" \
  jqt "$T/nginx-user.json" '.users.groups["hive-admin"].members == ["www"]'
ev "$T/nginx-noauth.json" --arg settings "$(settings '{ enable = true; settings.domain = "hive.example.org"; dashboard.nginx.enable = true; }')"
check "dashboard.nginx without basicAuthFile fails, saying what to set and why" \
  fails_with "$T/nginx-noauth.json" "services.hive-c0re.dashboard.nginx: set basicAuthFile to an htpasswd file of the operators (nginx joins hive-admin, so everyone who gets past it is an operator), or allowUnauthenticated = true"
ev "$T/nginx-optout.json" --arg settings "$(settings '{ enable = true; settings.domain = "hive.example.org";
  dashboard.nginx = { enable = true; allowUnauthenticated = true; }; }')"
check "dashboard.nginx.allowUnauthenticated = true is the explicit opt-out: no password asked" \
  jqt "$T/nginx-optout.json" '.services.nginx.virtualHosts["hive.example.org"].basicAuthFile == null'
ev "$T/nginx-nodomain.json" --arg settings "$(settings '{ enable = true; dashboard.nginx = { enable = true; allowUnauthenticated = true; }; }')"
check "dashboard.nginx without settings.domain fails, naming it" \
  fails_with "$T/nginx-nodomain.json" "services.hive-c0re.dashboard.nginx.enable: set services.hive-c0re.settings.domain"
ev "$T/nginx-nodash.json" --arg settings "$(settings '{ enable = true; settings.domain = "h.example"; dashboard = { enable = false;
  nginx = { enable = true; allowUnauthenticated = true; }; }; }')"
check "dashboard.nginx with the dashboard off fails, saying so" \
  fails_with "$T/nginx-nodash.json" "services.hive-c0re.dashboard.nginx.enable needs services.hive-c0re.dashboard.enable = true"
ev "$T/nginx-storeauth.json" --arg settings "$(settings '{ enable = true; settings.domain = "h.example";
  dashboard.nginx = { enable = true; basicAuthFile = ./htpasswd; }; }')"
check "dashboard.nginx.basicAuthFile refuses a Nix path (it would be copied into the world-readable store)" \
  fails_with "$T/nginx-storeauth.json" "services.hive-c0re.dashboard.nginx.basicAuthFile' is not of type"
