# services.hive-agent: the inside of an agent container (nixos profile).
#
# hive-c0re gives each agent container h-<name>:
#   - /run/hive (its runtime directory, with mcp.sock) and /var/lib/hive (its
#     state), bind-mounted by container@.service from
#     /etc/nixos-containers/h-<name>.conf;
#   - HIVE_TOOL_GROUPS, HIVE_CAPABILITIES and HIVE_CLAUDE_ENV (its agent.json's
#     variables for Claude) in the environment of the container's init
#     (nspawn --setenv).
# This module runs `hive-agent run`, the agent's turn loop, from
# hive-agent.service with Claude Code on its PATH.
#
# Decisions:
# - PassEnvironment=: systemd starts services with a clean environment, not
#   init's; PassEnvironment= copies named variables from it, so the grants
#   hive-c0re sets at spawn and rebuild reach the harness.
# - Runs as `agent` (uid/gid 1000, the user of systemd/hive-agent.sysusers in
#   the nspawn profile's image), not root: hive-c0re runs the container in a
#   user range of its own (--private-users=<base>:65536) and gives /run/hive,
#   /var/lib/hive and the sockets (mcp.sock, egress.sock, 0600) to <base>+1000,
#   which is this user inside. The same sandbox as systemd/hive-agent.service:
#   NoNewPrivileges, no capabilities, @system-service, AF_UNIX/INET/INET6/
#   NETLINK only. No network but loopback (PRIVATE_NETWORK=1 without
#   addresses): `hive-agent run` relays Claude's HTTPS_PROXY to egress.sock.
# - CLAUDE_CONFIG_DIR is under /var/lib/hive, in the service and in login
#   shells alike, so `machinectl shell h-<name>` then `claude login` stores
#   the login where the service finds it, and it survives rebuilds.
# The host module (NixOS-module.nix) imports this for every agent; the
# flake exposes it as nixosModules.agent for systems built elsewhere.
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption mkIf mkDefault types;
  cfg = config.services.hive-agent;
  stateDir = "/var/lib/hive";
  runtimeDir = "/run/hive";
in
{
  meta.maintainers = [ (import ./maintainers.nix).hive-c0re ];

  options.services.hive-agent = {
    enable = lib.mkEnableOption "hive-agent, the turn loop of a hive-c0re agent (inside its container)";

    package = lib.mkPackageOption pkgs "hive-c0re" {
      extraDescription = "Provides `bin/hive-agent`.";
    };

    claudePackage = lib.mkPackageOption pkgs "claude-code" {
      extraDescription = ''
        Claude Code, which hive-agent runs for every turn. Unfree in nixpkgs:
        allow it with `nixpkgs.config.allowUnfreePredicate` on the host.
      '';
    };

    extraPackages = mkOption {
      type = types.listOf types.package;
      default = [ pkgs.git pkgs.ripgrep ];
      defaultText = lib.literalExpression "[ pkgs.git pkgs.ripgrep ]";
      description = "Programs on the PATH of hive-agent (and so of Claude Code's tools), besides Claude Code.";
    };

    claudeConfigDir = mkOption {
      type = types.strMatching "/[^[:space:]]*";
      default = "${stateDir}/claude";
      description = ''
        `CLAUDE_CONFIG_DIR` of the service and of login shells: Claude Code's
        login and settings. Under ${stateDir} (the agent's state, kept by
        hive-c0re across rebuilds) by default.
      '';
    };
  };

  config = mkIf cfg.enable {
    systemd.services.hive-agent = {
      description = "hive-agent: the agent's turn loop (Claude Code)";
      wantedBy = [ "multi-user.target" ];
      after = [ "network.target" ];
      path = [ cfg.claudePackage ] ++ cfg.extraPackages;
      environment = {
        CLAUDE_CONFIG_DIR = cfg.claudeConfigDir;
        HOME = stateDir;
      };
      unitConfig.RequiresMountsFor = [ runtimeDir stateDir ];
      serviceConfig = {
        User = "agent";
        Group = "agent";
        NoNewPrivileges = true;
        CapabilityBoundingSet = "";
        SystemCallFilter = "@system-service";
        SystemCallErrorNumber = "EPERM";
        SystemCallArchitectures = "native";
        RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" "AF_NETLINK" ];
        RestrictSUIDSGID = true;
        LockPersonality = true;
        RestrictRealtime = true;
        Type = "notify";
        ExecStart = "${lib.getExe' cfg.package "hive-agent"} run";
        Restart = "on-failure";
        RestartSec = mkDefault "5s";
        PassEnvironment = [ "HIVE_TOOL_GROUPS" "HIVE_CAPABILITIES" "HIVE_CLAUDE_ENV" ];
        WorkingDirectory = stateDir;
      };
    };

    # The harness's user: uid and gid fixed at 1000, as hive-c0re owns the
    # bound directories from <range base>+1000 (src/systemd/dbus/userns.rs).
    users.users.agent = {
      uid = 1000;
      group = "agent";
      isSystemUser = true;
      home = stateDir;
      createHome = false;
      description = "hive agent (Claude Code)";
    };
    users.groups.agent.gid = 1000;

    environment.variables.CLAUDE_CONFIG_DIR = cfg.claudeConfigDir;
    environment.systemPackages = [ cfg.claudePackage ];
  };
}
