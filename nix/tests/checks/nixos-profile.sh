# nix/tests/checks/nixos-profile.sh: the default nixos profile: build command, agent system, tmpfiles, polkit.
# Sourced by nix/tests/run, in its order, with its helpers and variables.
# shellcheck shell=bash

# --- the default nixos profile spawns: build command and agent system ---------------
BUILD=$(jq -r '.services["hive-c0re"].settings.nixos_build_command[0]' "$T/on.json")
# system_of AGENT: the path the build command prints for h-AGENT (its last line)
system_of() { "$BUILD" "h-$1" | tail -n1; }
check "the default nixos_build_command is one prebuilt script, run without a shell by the daemon" \
  jqt "$T/on.json" "(.services[\"hive-c0re\"].settings.nixos_build_command | length == 1) and (\"$BUILD\" | startswith(\"$STORE/\"))"
COMMON=$(system_of anyone 2>&1)
check "it prints the common agent system for any agent (a NixOS container, host name from nspawn)" \
  jqt "$COMMON" '.isContainer == true and .hostName == "" and (.units | has("hive-agent.service"))'
mkdir -p "$T/agent-units"
jq -r '.units["hive-agent.service"]' "$COMMON" >"$T/agent-units/hive-agent.service" 2>/dev/null
effective "$T/agent-units" hive-agent.service >"$T/agent.json" || bad "the agent unit parses" ""
check "agent container: hive-agent.service runs '\$package/bin/hive-agent run', Type=notify, Restart=on-failure" \
  jqt "$T/agent.json" ".Service.ExecStart == [\"$PKG/bin/hive-agent run\"] and .Service.Type == [\"notify\"]
    and .Service.Restart == [\"on-failure\"]"
check "agent container: the grants and agent.json's variables set at spawn (HIVE_TOOL_GROUPS, HIVE_CAPABILITIES, HIVE_CLAUDE_ENV) reach it (PassEnvironment)" \
  jqt "$T/agent.json" '.Service.PassEnvironment == ["HIVE_TOOL_GROUPS", "HIVE_CAPABILITIES", "HIVE_CLAUDE_ENV"]'
check "agent container: Claude Code on its PATH, CLAUDE_CONFIG_DIR under /var/lib/hive for it and login shells" \
  jqt "$T/agent.json" "(.Service.Environment | any(test(\"^\\\"PATH=$STORE/claude-code/bin:\")))
    and (.Service.Environment | any(. == \"\\\"CLAUDE_CONFIG_DIR=/var/lib/hive/claude\\\"\"))
    and (\$c[0].environment.CLAUDE_CONFIG_DIR == \"/var/lib/hive/claude\")
    and (\$c[0].systemPackages | index(\"claude-code\") != null)" --slurpfile c "$COMMON"
check "agent container: the unit waits for the /run/hive and /var/lib/hive binds" \
  jqt "$T/agent.json" '.Unit.RequiresMountsFor == ["/run/hive", "/var/lib/hive"]'
check "systemd-analyze verify of hive-agent.service prints nothing" verify_quiet "$T/agent-units" hive-agent.service
# Issue 27: the harness is not root in its container, and has the nspawn image's sandbox.
check "agent container: user agent is uid 1000 and group agent gid 1000 (the owner hive-c0re gives the binds: range base + 1000)" \
  jqt "$COMMON" '.users.agent.uid == 1000 and .users.agent.group == "agent" and .groups.agent.gid == 1000
    and .users.agent.home == "/var/lib/hive"'
effective systemd hive-agent.service >"$T/image-agent.json" || bad "systemd/hive-agent.service parses" ""
# sandbox KEY: the unit's KEY, the same in the module's unit as in the nspawn image's (its
# words, NixOS's true/false read as yes/no)
sandbox_same() { jq -e --arg k "$1" --slurpfile img "$T/image-agent.json" '
  def words: [.[]? | tostring | split(" ")[] | select(. != "")
    | if . == "true" then "yes" elif . == "false" then "no" else . end];
  (.Service[$k] | words) as $m | ($img[0].Service[$k] | words) as $i
  | if $m == $i and .Service[$k] != null and $img[0].Service[$k] != null then true
    else error("module \($m) image \($i)") end' "$T/agent.json"; }
for key in User Group NoNewPrivileges CapabilityBoundingSet SystemCallFilter SystemCallErrorNumber \
  SystemCallArchitectures RestrictAddressFamilies RestrictSUIDSGID LockPersonality RestrictRealtime; do
  check "agent container: hive-agent.service's $key is the nspawn image's (systemd/hive-agent.service)" sandbox_same "$key"
done

# An approved config with agent.nix: the daemon appends its exported tree and
# commit. The script then runs nix-build (here a stand-in on PATH that
# records its argv) on the module's expression, and its last line is the path.
mkdir -p "$T/fakebin" "$T/tree"
cat >"$T/fakebin/nix-build" <<'STANDIN'
#!/bin/sh
printf '%s\n' "$@" >"$(dirname "$0")/nix-build.argv"
echo "building the system" >&2
echo /nix/store/00000000000000000000000000000000-nixos-system-agent
STANDIN
chmod +x "$T/fakebin/nix-build"
printf '%s\n' '{ ... }: { environment.variables.FROM_AGENT_NIX = "yes"; }' >"$T/tree/agent.nix"
agent_nix_build() {
  local out expr
  out=$(PATH="$T/fakebin:$PATH" "$BUILD" h-kid "$T/tree" 0123456789abcdef0123456789abcdef01234567 | tail -n1) || return 1
  [ "$out" = /nix/store/00000000000000000000000000000000-nixos-system-agent ] || { echo "printed: $out"; return 1; }
  expr=$(sed -n 2p "$T/fakebin/nix-build.argv")
  [ "$(sed -n 1p "$T/fakebin/nix-build.argv")" = --no-out-link ] &&
    [[ "$expr" == "$STORE/"*-hive-c0re-agent-nix-system.nix ]] &&
    [ "$(sed -n '3,$p' "$T/fakebin/nix-build.argv" | tr '\n' ' ')" = "--argstr tree $T/tree " ] || {
    cat "$T/fakebin/nix-build.argv"
    return 1
  }
  echo "$expr" >"$T/agent-nix-expr"
}
check "given a config tree and its commit, the default build command runs nix-build on the module's agent.nix expression and prints its path" \
  agent_nix_build
# The expression itself, evaluated with the stub (its pkgs, and store paths
# as the stub's package shape, stood in for): the agent module, then the
# tree's agent.nix.
agent_nix_system() {
  local expr
  expr=$(cat "$T/agent-nix-expr") || return 1
  "${NI[@]}" --eval --strict --json -E "(import $expr {
      tree = \"$T/tree\";
      storePath = p: { type = \"derivation\"; outPath = p; name = baseNameOf p; };
      agentModule = $ROOT/nix/agent-module.nix;
      pkgs = import $HERE/stub-nixpkgs/pkgs.nix {
        storeDir = \"$STORE\";
        outPath = \"$PKG\";
        overlays = [ (import $ROOT/nix/overlay.nix) ];
      };
    }).text" >"$T/agent-nix-system.json" || return 1
  jqt "$T/agent-nix-system.json" 'fromjson | .isContainer == true and .hostName == ""
    and .environment.FROM_AGENT_NIX == "yes" and (.units | has("hive-agent.service"))'
}
check "that expression builds an agent container: the agent module with the host's hive-agent, then agent.nix" \
  agent_nix_system

# tmpfiles_apply JSON ROOT: create the module's tmpfiles rules in a scratch root
tmpfiles_apply() {
  local out
  mkdir -p "$2/etc"
  echo 'root:x:0:0:root:/root:/bin/sh' >"$2/etc/passwd"
  echo 'root:x:0:' >"$2/etc/group"
  out=$(jq -r '.systemd.tmpfiles.rules[]' "$1" | systemd-tmpfiles --create --root="$2" - 2>&1) && [ -z "$out" ] || {
    echo "$out"
    return 1
  }
}
# mode_is ROOT PATH "MODE USER GROUP"
mode_is() {
  local got
  got=$(stat -c '%a %U %G' "$1$2" 2>&1)
  [ "$got" = "$3" ] || { echo "$2: $got, want $3"; return 1; }
}
tmpfiles_nixos() {
  tmpfiles_apply "$T/on.json" "$T/root-nixos" &&
    mode_is "$T/root-nixos" /var/lib/hyperhive "750 root root" &&
    mode_is "$T/root-nixos" /etc/nixos-containers "755 root root"
}
check "tmpfiles rules apply in a scratch root (nixos profile)" tmpfiles_nixos

check "polkit is enabled for the rule (mkDefault)" jqt "$T/on.json" '.security.polkit.enable == true'
ev "$T/nopolkit.json" --arg settings '{ services.hive-c0re.enable = true; security.polkit.enable = false; }'
check "a site may still turn polkit off (security.polkit.enable = false wins over the module)" \
  jqt "$T/nopolkit.json" '.security.polkit.enable == false'
jq -r .security.polkit.extraConfig "$T/on.json" >"$T/polkit.rules"
check "polkit rule: grants exactly machine1.shell by hive-admin on h-<agent>, leaves the rest unhandled" \
  node "$HERE/polkit-rule.js" "$T/polkit.rules"

real_polkitd() {
  [ "$(id -u)" -eq 0 ] || {
    echo "needs root (private mount and PID namespaces)"
    return 1
  }
  "$HERE/polkitd-real.sh" "$T/polkit.rules"
}
check "polkit rule: the real polkitd grants and leaves alone the same requests (10 cases)" real_polkitd
