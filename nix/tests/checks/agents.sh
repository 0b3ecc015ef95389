# nix/tests/checks/agents.sh: declared agents, disabled module, mistakes that fail evaluation.
# Sourced by nix/tests/run, in its order, with its helpers and variables.
# shellcheck shell=bash

# --- 6. declared agents -----------------------------------------------------------------
ev "$T/agents.json" --arg settings "$(settings '{ enable = true;
  agentConfig = { pkgs, ... }: { environment.systemPackages = [ pkgs.git ]; };
  agents.scout = { };
  agents.builder = { spawn = false; config = { pkgs, ... }: { environment.systemPackages = [ pkgs.ripgrep ]; }; };
}')"
if [ -e "$T/agents.json" ]; then
  ok "the module evaluates (agents.scout, agents.builder, agentConfig)"
  materialize "$T/agents.json"
  BUILD=$(jq -r '.services["hive-c0re"].settings.nixos_build_command[0]' "$T/agents.json")
  SCOUT=$(system_of scout)
  BUILDER=$(system_of builder)
  OTHER=$(system_of other)
  check "the build command prints each declared agent's own system (agents.<name>.path)" \
    jqt "$T/agents.json" ".services[\"hive-c0re\"].agents == { scout: { path: \"$SCOUT\" }, builder: { path: \"$BUILDER\" } }"
  check "a declared agent's container is named after it and runs hive-agent" \
    jqt "$SCOUT" '.hostName == "h-scout" and (.units | has("hive-agent.service"))'
  check "agents.<name>.config goes to that agent only; agentConfig to every agent" \
    jqt "$BUILDER" '(.systemPackages | index("ripgrep") != null) and (.systemPackages | index("git") != null)'
  check "an undeclared agent gets the common system, with agentConfig" \
    jqt "$OTHER" '.hostName == "" and (.systemPackages | index("ripgrep") == null) and (.systemPackages | index("git") != null)'
  lay_out "$T/agents.json" "$T/agents-units"
  effective "$T/agents-units" hive-c0re-agents.service >"$T/spawn-unit.json"
  check "hive-c0re-agents.service spawns at boot, after the daemon, once (oneshot)" \
    jqt "$T/spawn-unit.json" '.Unit.Requires == ["hive-c0re.service"] and .Unit.After == ["hive-c0re.service"]
      and .Service.Type == ["oneshot"] and .Service.RemainAfterExit == ["true"]'
  check "hive-c0re-agents.service is enabled (wantedBy multi-user.target)" \
    jqt "$T/agents.json" '.systemd.services["hive-c0re-agents"].wantedBy == ["multi-user.target"]'
  check "systemd-analyze verify of hive-c0re-agents.service prints nothing" \
    verify_quiet "$T/agents-units" hive-c0re-agents.service
  SPAWN=$(jq -r '.Service.ExecStart[0]' "$T/spawn-unit.json")

  # The spawn script against the real daemon (fake driver) and the real
  # hivectl, in place of the package's: scout (spawn = true) is spawned,
  # builder (spawn = false) is not, a second run changes nothing.
  spawn_real() {
    local dir=$T/spawn-daemon pid i rc=0 list
    mkdir -p "$dir/state" "$dir/run"
    sed "s|$CLIENT/bin/hivectl|$BIN/hivectl|g" "$SPAWN" >"$dir/spawn" && chmod +x "$dir/spawn"
    "$BIN/hive-c0re" serve --state-dir "$dir/state" --runtime-dir "$dir/run" --driver fake >"$dir/log" 2>&1 &
    pid=$!
    for i in $(seq 50); do [ -S "$dir/run/host.sock" ] && break; sleep 0.1; done
    export HIVE_SOCKET=$dir/run/host.sock
    { "$dir/spawn" && "$dir/spawn"; } >"$dir/out" 2>&1 || rc=1
    list=$("$BIN/hivectl" list 2>&1)
    unset HIVE_SOCKET
    kill "$pid"
    wait "$pid" 2>/dev/null
    [ "$rc" = 0 ] && printf '%s\n' "$list" | grep -qx scout && ! printf '%s\n' "$list" | grep -qx builder || {
      echo "spawn script: $(cat "$dir/out")"
      echo "hivectl list: $list"
      tail -n 5 "$dir/log"
      return 1
    }
  }
  if [ -x "$BIN/hive-c0re" ] && [ -x "$BIN/hivectl" ]; then
    check "the spawn script, run twice against the real daemon: scout spawned once, builder not" spawn_real
  else
    echo "skip - the spawn script against the real daemon: $BIN/hive-c0re or hivectl is not built"
  fi
else
  bad "the module evaluates (agents.scout, agents.builder, agentConfig)" "$(grep -v '^trace: ' "$T/agents.json.err")"
fi
check "no agent declared to spawn: no hive-c0re-agents.service" \
  jqt "$T/on.json" '.systemd.services | has("hive-c0re-agents") | not'
ev "$T/badname.json" --arg settings "$(settings '{ enable = true; agents."Bad_Name" = { }; }')"
check "an agent name hivectl would refuse fails evaluation, naming it" \
  fails_with "$T/badname.json" "services.hive-c0re.agents: Bad_Name: an agent name is 1 to 63 of a-z, 0-9 and '-'."

# The README's example configuration, as an operator pastes it (the checkout's
# path filled in; the module comes from its imports).
awk '/^## NixOS/ { f = 1 } f && /^```nix/ { g = 1; next } g && /^```/ { exit } g { print }' README.md |
  sed "s|/path/to/hive-c0re|$ROOT|g" >"$T/example.nix"
ev "$T/example.json" --arg module '{ }' --arg settings "import $T/example.nix"
check "the README's NixOS example evaluates: agents scout and builder, alice in hive-admin, the dashboard behind nginx" \
  jqt "$T/example.json" '(.services["hive-c0re"].agents | keys == ["builder", "scout"])
    and .users.users.alice.extraGroups == ["hive-admin"] and .services["hive-c0re"].settings.domain == "hive.example.org"
    and (.services.nginx.virtualHosts["hive.example.org"] | .enableACME and .forceSSL
      and .basicAuthFile == "/var/lib/secrets/hive.htpasswd" and (.locations | has("/events/")))'

# --- 7. disabled ------------------------------------------------------------------
ev "$T/off.json" --arg settings "$(settings '{ settings.domain = "x.example"; agents.scout = { }; }')"
check "disabled (the default): nothing is generated" \
  jqt "$T/off.json" '.systemd == { packages: [], services: {}, sockets: {}, nspawn: {}, tmpfiles: { rules: [] } }
    and .units == {} and .users.groups == {} and .environment == { etc: {}, systemPackages: [] }
    and .security.polkit == { enable: false, extraConfig: "" } and .boot.enableContainers == true'

# --- 8. mistakes fail evaluation -------------------------------------------------------
ev "$T/typo.json" --arg settings "$(settings '{ enable = true; socketActivaton = false; }')"
check "a typo in an option name fails (socketActivaton)" \
  fails_with "$T/typo.json" "The option \`services.hive-c0re.socketActivaton' does not exist."
ev "$T/removed.json" --arg settings "$(settings '{ enable = true; adminUsers = [ "alice" ]; }')"
check "the old adminUsers option is gone (users.users.<name>.extraGroups instead)" \
  fails_with "$T/removed.json" "The option \`services.hive-c0re.adminUsers' does not exist."

# the module itself misspelling a NixOS option (a copy, mutated)
mkdir -p "$T/mut" && for f in nix src systemd Cargo.toml Cargo.lock; do ln -s "$ROOT/$f" "$T/mut/$f"; done
sed 's/systemd\.sockets\.hive-c0re\.wantedBy/systemd.socket.hive-c0re.wantedBy/' NixOS-module.nix >"$T/mut/NixOS-module.nix"
ev "$T/mut.json" --arg module "$T/mut/NixOS-module.nix"
check "a typo in a NixOS option the module sets fails (systemd.socket)" \
  fails_with "$T/mut.json" "The option \`systemd.socket' does not exist."

ev "$T/badprofile.json" --arg settings "$(settings '{ enable = true; settings.profile = "docker"; }')"
check "settings.profile must be nixos or nspawn" \
  fails_with "$T/badprofile.json" "services.hive-c0re.settings.profile' is not of type"
ev "$T/badmem.json" --arg settings "$(settings '{ enable = true; settings.agent_memory_max = "4GB"; }')"
check "settings.agent_memory_max must be a MemoryMax= value (4GB is not)" \
  fails_with "$T/badmem.json" "services.hive-c0re.settings.agent_memory_max' is not of type"
ev "$T/badquota.json" --arg settings "$(settings '{ enable = true; settings.agent_cpu_quota = "2"; }')"
check "settings.agent_cpu_quota must be a percentage" \
  fails_with "$T/badquota.json" "services.hive-c0re.settings.agent_cpu_quota' is not of type"
ev "$T/baddeadline.json" --arg settings "$(settings '{ enable = true; settings.stop_deadline_secs = "30"; }')"
check "settings.stop_deadline_secs must be a number" \
  fails_with "$T/baddeadline.json" "services.hive-c0re.settings.stop_deadline_secs' is not of type"
ev "$T/relstate.json" --arg settings "$(settings '{ enable = true; settings.state_dir = "var/lib/hive"; }')"
check "settings.state_dir must be an absolute path" \
  fails_with "$T/relstate.json" "services.hive-c0re.settings.state_dir' is not of type"
ev "$T/unknownkey.json" --arg settings "$(settings '{ enable = true; settings.stop_deadline_sec = 5; }')"
check "an unknown settings key (accepted by the free-form type) fails, naming it, as the daemon would" \
  fails_with "$T/unknownkey.json" "services.hive-c0re.settings: unknown key(s) stop_deadline_sec; hive-c0re refuses them."
daemon_refuses_unknown() {
  local dir=$T/unknown-daemon out
  mkdir -p "$dir"
  echo '{"stop_deadline_sec": 5}' >"$dir/config.json"
  out=$(timeout 10 "$BIN/hive-c0re" serve --config "$dir/config.json" --state-dir "$dir/s" --runtime-dir "$dir/r" --driver fake 2>&1) &&
    { echo "the daemon started"; return 1; }
  grep -q 'unknown field `stop_deadline_sec`' <<<"$out" || { echo "$out"; return 1; }
}
if [ -x "$BIN/hive-c0re" ]; then
  check "... and the real daemon refuses that key too (why the module refuses it)" daemon_refuses_unknown
fi
ev "$T/runtime.json" --arg settings "$(settings '{ enable = true; settings.runtime_dir = "/run/x"; }')"
check "settings.runtime_dir other than /run/hyperhive fails (the socket unit fixes it)" \
  fails_with "$T/runtime.json" "services.hive-c0re.settings.runtime_dir: /run/x is not possible; hive-c0re.socket fixes /run/hyperhive."
