# nix/tests/checks/settings.sh: nspawn profile, own state dir, more settings; socketActivation = false.
# Sourced by nix/tests/run, in its order, with its helpers and variables.
# shellcheck shell=bash

# --- 4. nspawn profile, own state dir, more settings --------------------------------
ev "$T/nspawn.json" --arg settings "$(settings '{ enable = true; settings = { profile = "nspawn";
  state_dir = "/srv/hive"; domain = "hive.example.org"; agent_cpu_quota = null; agent_memory_max = "8G";
  forge_url = "https://forge.hive.example.org"; stop_deadline_secs = 60; }; }')"
if [ -e "$T/nspawn.json" ]; then
  ok "the module evaluates (nspawn profile, state_dir, domain, more settings)"
  materialize "$T/nspawn.json"
  check "the config file carries the settings (null = no CPU limit) and no build command" \
    jqt "$(jq -r '.environment.etc["hive-c0re/config.json"].source' "$T/nspawn.json")" \
    '.state_dir == "/srv/hive" and .profile == "nspawn" and .domain == "hive.example.org"
      and .agent_cpu_quota == null and .agent_memory_max == "8G" and .forge_url == "https://forge.hive.example.org"
      and .stop_deadline_secs == 60 and .nixos_build_command == [] and .max_body_bytes == 65536'
  check "nspawn profile: git but no nix on the daemon's PATH, no NIX_REMOTE, /etc/systemd/nspawn and the state dir made" \
    jqt "$T/nspawn.json" '(.systemd.services["hive-c0re"].path | length == 1 and all(tostring | test("git"))) and (.systemd.services["hive-c0re"].environment == {})
      and .systemd.tmpfiles.rules == ["d /srv/hive 0750 root root -", "d /etc/systemd/nspawn 0755 root root -"]'
  lay_out "$T/nspawn.json" "$T/nspawn-units"
  effective "$T/nspawn-units" hive-c0re.service >"$T/service-nspawn.json"
  check "a state dir outside /var/lib/hyperhive is made writable (ProtectSystem=strict)" \
    jqt "$T/service-nspawn.json" '.Service.ReadWritePaths == ["-/etc/systemd/nspawn -/etc/nixos-containers -/var/lib/hive-images", "/srv/hive"]'
  check "systemd-analyze verify of the nspawn-profile units prints nothing" \
    verify_quiet "$T/nspawn-units" hive-c0re.socket hive-c0re.service
  check "a hive alone keeps the unit's network sandbox (no drop-in opens it)" \
    jqt "$T/service-nspawn.json" '(.Service.PrivateNetwork == ["yes"]) and (.Service.IPAddressDeny == ["any"])
      and (.Service.RestrictAddressFamilies == ["AF_UNIX"])'
  tmpfiles_nspawn() {
    tmpfiles_apply "$T/nspawn.json" "$T/root-nspawn" &&
      mode_is "$T/root-nspawn" /srv/hive "750 root root" &&
      mode_is "$T/root-nspawn" /etc/systemd/nspawn "755 root root"
  }
  check "tmpfiles rules apply in a scratch root (nspawn profile)" tmpfiles_nspawn
  ev "$T/swarm.json" --arg settings "$(settings '{ enable = true; settings = { profile = "nspawn";
    hive_name = "hive-a"; swarm_name = "s"; swarm = { urls = [ "nats://10.0.0.1:4222" ]; }; }; }')"
  lay_out "$T/swarm.json" "$T/swarm-units"
  effective "$T/swarm-units" hive-c0re.service >"$T/service-swarm.json"
  check "a swarm hive's unit is opened for TCP to NATS (network namespace, IP deny list, AF_INET)" \
    jqt "$T/service-swarm.json" '(.Service.PrivateNetwork[-1] == "false") and (.Service.IPAddressDeny == [])
      and (.Service.RestrictAddressFamilies | contains(["AF_UNIX", "AF_INET", "AF_INET6"]))'
  check "systemd-analyze verify of the swarm hive's units prints nothing" \
    verify_quiet "$T/swarm-units" hive-c0re.socket hive-c0re.service
  if [ -x "$BIN/hive-c0re" ]; then
    check "the real hive-c0re starts with the nspawn-profile config file" \
      daemon_reads "$(jq -r '.environment.etc["hive-c0re/config.json"].source' "$T/nspawn.json")"
  fi
else
  bad "the module evaluates (nspawn profile, state_dir, domain, more settings)" "$(grep -v '^trace: ' "$T/nspawn.json.err")"
fi

ev "$T/merged.json" --arg settings '{ imports = [
  ({ lib, ... }: { services.hive-c0re.settings = { domain = lib.mkDefault "a.example"; stop_deadline_secs = 5; }; })
  { services.hive-c0re.settings.domain = "b.example"; }
  { services.hive-c0re.settings.approval_command = [ "/bin/approve" ]; }
]; services.hive-c0re.enable = true; }'
check "settings defined in several modules merge key by key, priorities per key (mkDefault loses)" \
  jqt "$T/merged.json" '.services["hive-c0re"].settings | .domain == "b.example" and .stop_deadline_secs == 5
    and .approval_command == ["/bin/approve"] and .profile == "nixos"'

ev "$T/nspawn-ro.json" --arg settings '{ services.hive-c0re = { enable = true; settings.profile = "nspawn"; };
  systemd.nspawn.other.execConfig.Boot = true; }'
check "nspawn profile with systemd.nspawn.<name> (read-only /etc/systemd/nspawn) fails, naming the machine" \
  fails_with "$T/nspawn-ro.json" "but systemd.nspawn.<name> (other) makes that directory a read-only link into the Nix store"
ev "$T/nixos-nspawn-units.json" --arg settings '{ services.hive-c0re.enable = true; systemd.nspawn.other.execConfig.Boot = true; }'
check "the nixos profile does not mind systemd.nspawn.<name>" jqt "$T/nixos-nspawn-units.json" '.services["hive-c0re"].enable'

ev "$T/nspawn-nocontainers.json" --arg settings \
  '{ services.hive-c0re = { enable = true; settings.profile = "nspawn"; }; boot.enableContainers = false; }'
check "nspawn profile leaves boot.enableContainers to the user" \
  jqt "$T/nspawn-nocontainers.json" '.boot.enableContainers == false'
ev "$T/nixos-nocontainers.json" --arg settings '{ services.hive-c0re.enable = true; boot.enableContainers = false; }'
check "nixos profile with boot.enableContainers = false fails, saying what to set" \
  fails_with "$T/nixos-nocontainers.json" "the nixos profile runs agents as NixOS containers (container@.service); set boot.enableContainers = true"

# --- 5. socketActivation = false ------------------------------------------------------
ev "$T/nosocket.json" --arg settings "$(settings '{ enable = true; socketActivation = false; }')"
if [ -e "$T/nosocket.json" ]; then
  materialize "$T/nosocket.json" || bad "the unit without socket can be made" ""
  UNITS=$(jq -r '.systemd.packages[0]' "$T/nosocket.json")
  check "without socket activation: no socket unit of the daemon, only the package's service and the egress proxy's units" \
    jqt "$T/nosocket.json" "(.systemd.packages | length == 1) and (.systemd.packages[0] != \"$PKG\")
      and (.systemd.sockets | keys == [\"hive-c0re-egress\"])"
  service_without_socket() {
    [ ! -e "$UNITS/lib/systemd/system/hive-c0re.socket" ] &&
      cmp "$PKG/lib/systemd/system/hive-c0re-egress.service" "$UNITS/lib/systemd/system/hive-c0re-egress.service" &&
      diff "$PKG/lib/systemd/system/hive-c0re.service" "$UNITS/lib/systemd/system/hive-c0re.service" |
      grep '^[<>]' >"$T/nosocket.diff"
    diff "$T/nosocket.diff" - <<'DIFF'
< Requires=hive-c0re.socket
< After=hive-c0re.socket dbus.service systemd-machined.service
> After=dbus.service systemd-machined.service
< Wants=hive-c0re-web.socket
< After=hive-c0re-web.socket
DIFF
  }
  check "its service is the package's minus the dependencies on hive-c0re.socket and hive-c0re-web.socket" service_without_socket
  lay_out "$T/nosocket.json" "$T/nosocket-units"
  effective "$T/nosocket-units" hive-c0re.service >"$T/service-nosocket.json"
  check "the daemon's own host.sock gets group hive-admin and mode 0660, its web.sock (0660) group hive-admin, once it is ready" \
    jqt "$T/service-nosocket.json" ".Service.ExecStartPost == [\"$STORE/coreutils/bin/chgrp hive-admin /run/hyperhive/host.sock\",
      \"$STORE/coreutils/bin/chmod 0660 /run/hyperhive/host.sock\", \"$STORE/coreutils/bin/chgrp hive-admin /run/hyperhive/web.sock\"]"
  # The ExecStartPost= lines, run on sockets the real daemon bound itself.
  own_sockets_fixed() {
    local dir=$T/own-sockets pid i cmd rc=0
    mkdir -p "$dir/state" "$dir/run"
    # with the unit's UMask=0077
    (umask 0077 && exec "$BIN/hive-c0re" serve --state-dir "$dir/state" --runtime-dir "$dir/run" --driver fake) >"$dir/log" 2>&1 &
    pid=$!
    for i in $(seq 200); do [ -S "$dir/run/web.sock" ] && [ -S "$dir/run/host.sock" ] && break; sleep 0.1; done
    # hive-admin exists only in a private mount namespace (a copy of
    # /etc/group bound over it), so the machine's groups stay untouched.
    { cat /etc/group; getent group hive-admin >/dev/null || echo "hive-admin:x:64990:"; } >"$dir/group"
    jq -r '.Service.ExecStartPost[]' "$T/service-nosocket.json" | sed "s|/run/hyperhive/|$dir/run/|" >"$dir/post"
    unshare --mount --propagation private bash -c 'mount --bind "$1/group" /etc/group &&
      while read -r cmd; do $cmd || exit 1; done <"$1/post" && stat -c "%n %a %U %G" "$1/run/host.sock" "$1/run/web.sock"' \
      _ "$dir" >"$dir/modes" 2>&1 || rc=1
    kill "$pid"
    wait "$pid" 2>/dev/null
    [ "$rc" = 0 ] && diff "$dir/modes" - <<MODES || { tail -n 5 "$dir/log"; return 1; }
$dir/run/host.sock 660 root hive-admin
$dir/run/web.sock 660 root hive-admin
MODES
  }
  if [ -x "$BIN/hive-c0re" ] && [ "$(id -u)" -eq 0 ]; then
    check "... run on the sockets the real daemon binds: both end up 0660 root:hive-admin" own_sockets_fixed
  else
    echo "skip - the ExecStartPost= lines on the real daemon's sockets: needs root and $BIN/hive-c0re"
  fi
  check "systemd-analyze verify of the service without socket prints nothing" \
    verify_quiet "$T/nosocket-units" hive-c0re.service
else
  bad "the module evaluates (socketActivation = false)" "$(grep -v '^trace: ' "$T/nosocket.json.err")"
fi

ev "$T/nosocket-nodash.json" --arg settings "$(settings '{ enable = true; socketActivation = false; dashboard.enable = false; }')"
check "without socket activation and with the dashboard off, web.sock stays the daemon's (root only)" \
  jqt "$T/nosocket-nodash.json" '.systemd.services["hive-c0re"].serviceConfig.ExecStartPost | length == 2 and all(endswith("/host.sock"))'
