# nix/tests/checks/module.sh: the enabled module (defaults: nixos profile, socket activation): units, config file.
# Sourced by nix/tests/run, in its order, with its helpers and variables.
# shellcheck shell=bash

# --- 3. the enabled module (defaults: nixos profile, socket activation) ------------
# lay_out JSON DIR: the units as NixOS writes them: a unit shipped by a
# package in systemd.packages is copied, the module's text becomes its
# drop-in <unit>.d/overrides.conf; other units are written whole.
lay_out() {
  local json=$1 dir=$2 name p src
  mkdir -p "$dir"
  for name in $(jq -r '.units | keys[]' "$json"); do
    src=""
    for p in $(jq -r '.systemd.packages[]' "$json"); do
      [ -f "$p/lib/systemd/system/$name" ] && src=$p/lib/systemd/system/$name
    done
    if [ -n "$src" ]; then
      cp "$src" "$dir/$name"
      mkdir -p "$dir/$name.d"
      jq -r --arg n "$name" '.units[$n]' "$json" >"$dir/$name.d/overrides.conf"
    else
      jq -r --arg n "$name" '.units[$n]' "$json" >"$dir/$name"
    fi
  done
}
# effective DIR UNIT: the merged unit as JSON { Section: { Key: [values] } }
effective() { node "$HERE/unit-effective.js" "$1/$2" $(ls "$1/$2.d/"*.conf 2>/dev/null); }

materialize "$T/on.json" || bad "the generated files can be written" ""
lay_out "$T/on.json" "$T/on-units"
effective "$T/on-units" hive-c0re.socket >"$T/socket.json" || bad "the socket unit merges" ""
effective "$T/on-units" hive-c0re.service >"$T/service.json" || bad "the service unit merges" ""
effective "$T/on-units" hive-c0re-web.socket >"$T/web-socket.json" || bad "the dashboard's socket unit merges" ""

check "the units are the package's (systemd.packages), not restated by the module" \
  jqt "$T/on.json" "(.systemd.packages == [\"$PKG\"]) and ([.systemd.services[], .systemd.sockets[]]
     | all(.listenStreams? // [] | length == 0) and all(.serviceConfig? // {} | has(\"Type\") | not))"

install_targets() { sed -n '/^\[Install\]/,/^\[/s/^WantedBy=//p' "systemd/$1"; }
check "the module enables the units as their [Install] sections say (NixOS ignores [Install])" \
  jqt "$T/on.json" ".systemd.sockets[\"hive-c0re\"].wantedBy == [\"$(install_targets hive-c0re.socket)\"]
    and .systemd.sockets[\"hive-c0re-web\"].wantedBy == [\"$(install_targets hive-c0re-web.socket)\"]
    and .systemd.services[\"hive-c0re\"].wantedBy == [\"$(install_targets hive-c0re.service)\"]
    and .systemd.sockets[\"hive-c0re-egress\"].wantedBy == [\"$(install_targets hive-c0re-egress.socket)\"]"

dropin_keys() {
  local keys
  keys=$(grep -hoE '^[A-Za-z-]+=' "$T"/on-units/*.d/*.conf | sort -u | tr -d '=' | tr '\n' ' ')
  [ "$keys" = "Environment ExecStart X-Restart-Triggers " ] || {
    echo "drop-in keys: $keys"
    return 1
  }
}
check "the module's drop-ins set only ExecStart, a restart trigger and PATH (nixos profile)" dropin_keys

check "effective socket: ListenStream=/run/hyperhive/host.sock" \
  jqt "$T/socket.json" '.Socket.ListenStream == ["/run/hyperhive/host.sock"]'
check "effective socket: SocketMode=0660" jqt "$T/socket.json" '.Socket.SocketMode[-1] == "0660"'
check "effective socket: SocketGroup=hive-admin" jqt "$T/socket.json" '.Socket.SocketGroup[-1] == "hive-admin"'
check "effective socket: DirectoryMode=0751" jqt "$T/socket.json" '.Socket.DirectoryMode[-1] == "0751"'
check "effective socket: FileDescriptorName=host" jqt "$T/socket.json" '.Socket.FileDescriptorName[-1] == "host"'
check "effective dashboard socket: ListenStream=/run/hyperhive/web.sock, fd name web, for hive-c0re.service" \
  jqt "$T/web-socket.json" '.Socket.ListenStream == ["/run/hyperhive/web.sock"] and .Socket.FileDescriptorName[-1] == "web"
    and .Socket.Service[-1] == "hive-c0re.service"'
check "effective dashboard socket: host.sock's audience (0660 root:hive-admin, directory 0751)" \
  jqt "$T/web-socket.json" '[.Socket | .SocketMode[-1], .SocketUser[-1], .SocketGroup[-1], .DirectoryMode[-1]]
    == ["0660", "root", "hive-admin", "0751"] and ([$host[0].Socket | .SocketMode[-1], .SocketUser[-1], .SocketGroup[-1]]
    == ["0660", "root", "hive-admin"])' --slurpfile host "$T/socket.json"
check "effective service: it wants, and starts after, the dashboard's socket (fd web handed over with host)" \
  jqt "$T/service.json" '(.Unit.Wants | index("hive-c0re-web.socket") != null) and (.Unit.After | index("hive-c0re-web.socket") != null)'
check "effective service: Type=notify" jqt "$T/service.json" '.Service.Type[-1] == "notify"'
check "effective service: exactly one ExecStart, the package's hive-c0re with the config file" \
  jqt "$T/service.json" ".Service.ExecStart == [\"$PKG/bin/hive-c0re serve --config /etc/hive-c0re/config.json\"]"
check "systemd-analyze verify of the units with the module's drop-ins prints nothing" \
  verify_quiet "$T/on-units" hive-c0re.socket hive-c0re-web.socket hive-c0re.service
# The score the real-systemd tier asserts on the loaded unit, here on the
# module's merged files (offline: the unit file and its drop-in).
exposure() {
  (cd "$1" && systemd-analyze security --offline=true --no-pager "$2" 2>&1) \
    | sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p'
}
at_most_3() {
  local score
  score=$(exposure "$@")
  awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 3.0) }' || {
    echo "exposure: ${score:-none}"
    return 1
  }
}
check "systemd-analyze security scores the module's service at most 3.0" \
  at_most_3 "$T/on-units" hive-c0re.service

check "the module creates hive-admin (the socket's group) with no members of its own" \
  jqt "$T/on.json" '.users.groups == { "hive-admin": { name: "hive-admin", gid: null, members: [] } }'
ev "$T/swarm.json" --arg settings '{ services.hive-c0re = { enable = true; settings = { hive_name = "hive-a";
  swarm_name = "s"; swarm = { urls = [ "nats://10.0.0.2:4222" ]; }; }; }; }'
check "a hive in a swarm may use TCP (AF_INET, AF_INET6), a hive alone only Unix sockets" \
  jqt "$T/swarm.json" '.systemd.services["hive-c0re"].serviceConfig.RestrictAddressFamilies == ["AF_UNIX", "AF_INET", "AF_INET6"]
    and ($alone[0].systemd.services["hive-c0re"].serviceConfig.RestrictAddressFamilies == null)' --slurpfile alone "$T/on.json"
ev "$T/big.json" --arg settings '{ services.hive-c0re = { enable = true; settings.max_agents = 20000; }; }'
lay_out "$T/big.json" "$T/big-units"
effective "$T/big-units" hive-c0re.service >"$T/service-big.json" || bad "the large hive's service unit merges" ""
check "a hive of 20,000 agents gets the fds of both sockets at their connection cap and two fd store slots each" \
  jqt "$T/service-big.json" '(.Service.LimitNOFILE[-1] == "361024") and (.Service.FileDescriptorStoreMax[-1] == "40002")
    and (.Service.Environment | map(select(test("FDSTORE="))) | last | test("FDSTORE=40002"))'
check "the host's inotify limits hold the default 1,000 agents at 128 instances and 65,536 watches (as systemd/hive-c0re.sysctl)" \
  jqt "$T/on.json" '(.boot.kernel.sysctl["fs.inotify.max_user_instances"] == 144128) and (.boot.kernel.sysctl["fs.inotify.max_user_watches"] == 66625536)'
check "a hive of 20,000 agents raises them with max_agents (an operator's own setting wins: priority 900)" \
  jqt "$T/big.json" '(.boot.kernel.sysctl["fs.inotify.max_user_instances"] == 2880128) and (.boot.kernel.sysctl["fs.inotify.max_user_watches"] == 1331265536)'
check "systemd/hive-c0re.sysctl ships the same values" \
  test "$(grep -E '^fs\.inotify\.' systemd/hive-c0re.sysctl | tr -d ' ' | sort | paste -sd' ')" = \
    "fs.inotify.max_user_instances=144128 fs.inotify.max_user_watches=66625536"
check "the default hive keeps the unit's own LimitNOFILE=65536 and FileDescriptorStoreMax=4096" \
  jqt "$T/service.json" '(.Service.LimitNOFILE == ["65536"]) and (.Service.FileDescriptorStoreMax == ["4096"])'
ev "$T/members.json" --arg settings '{ services.hive-c0re.enable = true;
  users.users.alice = { isNormalUser = true; extraGroups = [ "hive-admin" ]; }; }'
check "operators join with users.users.<name>.extraGroups = [ \"hive-admin\" ], the socket's group" \
  jqt "$T/members.json" ".users.users.alice.extraGroups == [$(jq '.Socket.SocketGroup[-1]' "$T/socket.json")]"

CONFIG=$(jq -r '.environment.etc["hive-c0re/config.json"].source' "$T/on.json")
check "the config file is formats.json's rendering of settings, every key with the daemon's default" \
  jqt "$CONFIG" '. == { state_dir: "/var/lib/hyperhive", runtime_dir: "/run/hyperhive", driver: "systemd",
     profile: "nixos", domain: null, forge_url: null, matrix_url: null, stop_deadline_secs: 30,
     template_image: "hive-template", nspawn_dir: "/etc/systemd/nspawn", bind_host_usr: true, agent_images_dir: "/var/lib/hive-images", nixos_containers_dir: "/etc/nixos-containers",
     nixos_build_command: [.nixos_build_command[0]], approval_command: [], meta_flake: null, nix_command: ["nix"], notify_command: [], notify_interval_secs: 60, auto_update: false, agent_cpu_quota: "200%",
     agent_memory_max: "4G", agent_tasks_max: 4096, agent_inotify_instances: 128, agent_inotify_watches: 65536, agent_disk_quota: "10G", agent_disk_inodes: 1000000, agent_disk_quota_required: false, max_agents: 1000, max_body_bytes: 65536, message_retention_secs: 604800, journal_directory: null,
     attention_after_secs: 300,
     agent_max_connections: 16, agent_idle_timeout_secs: 600, agent_max_answer_bytes: 4194304,
     inbox_max_messages: 10000, inbox_max_bytes: 67108864, transient_max_bytes: 1048576, agent_max_pending_approvals: 16,
            egress_audit_rows_per_agent: 2000, model_credential: null,
     egress_allow: [], budget_hive: [], budget_each_agent: [], budget_hard_cap: false, budget_hold_secs: 300,
     hive_name: null, swarm_name: null, swarm: null }'
check "a config file change restarts the daemon (restartTriggers)" \
  jqt "$T/on.json" '.systemd.services["hive-c0re"].restartTriggers == [.environment.etc["hive-c0re/config.json"].source]'

config_keys_match() {
  local struct module
  # A field marked #[serde(skip)] is no config key (set by a flag only).
  struct=$(awk '/^pub struct Config \{/ { f = 1; next } f && /^\}/ { f = 0 }
    f && /#\[serde\(skip\)\]/ { skip = 1; next }
    f && /^ *pub [a-z_0-9]+:/ { if (!skip) { sub(/^ *pub /, ""); sub(/:.*/, ""); print } skip = 0 }' src/config/mod.rs | sort)
  module=$(jq -r '.settingsKeys[]' "$T/on.json" | sort)
  [ -n "$struct" ] && [ "$struct" = "$module" ] || {
    diff <(echo "$struct") <(echo "$module") | sed 's/^</only in src\/config\/mod.rs:/; s/^>/only in the module:/'
    return 1
  }
}
check "settings declares exactly the config keys of src/config/mod.rs's Config" config_keys_match

# The real daemon reads the rendered file (it refuses unknown keys and bad
# values), with the fake driver and scratch directories.
daemon_reads() {
  local cfgfile=$1 dir=$T/daemon-$RANDOM pid i
  mkdir -p "$dir/state" "$dir/run"
  "$BIN/hive-c0re" serve --config "$cfgfile" --state-dir "$dir/state" --runtime-dir "$dir/run" --driver fake \
    >"$dir/log" 2>&1 &
  pid=$!
  for i in $(seq 50); do
    [ -S "$dir/run/host.sock" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -S "$dir/run/host.sock" ]; then
    kill "$pid"
    wait "$pid" 2>/dev/null
    return 0
  fi
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  cat "$dir/log"
  return 1
}
if [ -x "$BIN/hive-c0re" ]; then
  check "the real hive-c0re starts with the rendered config file" daemon_reads "$CONFIG"
else
  echo "skip - the real hive-c0re reads the rendered config: $BIN/hive-c0re is not built"
fi

check "nixos profile: boot.enableContainers left to NixOS, git and nix on the daemon's PATH (nix through nix-daemon), /etc/nixos-containers made" \
  jqt "$T/on.json" '.boot.enableContainers == true
    and (.systemd.services["hive-c0re"].path | length == 2)
    and (.systemd.services["hive-c0re"].path | any(tostring | test("git")))
    and .systemd.services["hive-c0re"].environment == { NIX_REMOTE: "daemon" }
    and .systemd.tmpfiles.rules == ["d /var/lib/hyperhive 0750 root root -", "d /etc/nixos-containers 0755 root root -"]'
check "only the client (hivectl, man pages, completions) is installed system-wide" \
  jqt "$T/on.json" ".environment.systemPackages == [\"$CLIENT\"]"
check "the modules name their maintainers (meta.maintainers)" \
  jqt "$T/on.json" '.meta.maintainers | length >= 1 and all(has("name"))'

# --- the model gateway's credentials: systemd credentials of the egress service, paths only ---
GW='{ enable = true; modelGateway = { credentials.anthropic = "/run/secrets/anthropic"; extraCA = "/etc/hive-ca.pem"; }; settings.model_credential = "anthropic"; }'
ev "$T/gateway.json" --arg settings "$(settings "$GW")" && materialize "$T/gateway.json"
check "modelGateway.credentials become LoadCredential=NAME:PATH of hive-c0re-egress.service, its upstream and CA its environment" \
  jqt "$T/gateway.json" '.systemd.services["hive-c0re-egress"].serviceConfig.LoadCredential == ["anthropic:/run/secrets/anthropic"]
    and .systemd.services["hive-c0re-egress"].environment.HIVE_MODEL_UPSTREAM == "https://api.anthropic.com"
    and .systemd.services["hive-c0re-egress"].environment.HIVE_MODEL_CA == "/etc/hive-ca.pem"'
check "... and the config file names the credential, never its value or path" \
  jqt "$(jq -r '.environment.etc["hive-c0re/config.json"].source' "$T/gateway.json")" \
  '.model_credential == "anthropic" and (tostring | contains("/run/secrets") | not)'
ev "$T/gateway-unknown.json" --arg settings "$(settings '{ enable = true; settings.model_credential = "anthropic"; }')"
check "settings.model_credential naming no modelGateway.credentials entry fails, saying so" \
  fails_with "$T/gateway-unknown.json" "services.hive-c0re.settings.model_credential: anthropic is not one of services.hive-c0re.modelGateway.credentials"
ev "$T/gateway-badname.json" --arg settings "$(settings '{ enable = true; modelGateway.credentials."../x" = "/run/x"; }')"
check "a credential name that is not a systemd credential name fails, saying what one is" \
  fails_with "$T/gateway-badname.json" "services.hive-c0re.modelGateway.credentials: ../x: a credential name is 1 to 64"
