# services.hive-c0re: the hive's host daemon on NixOS.
#
# Decision: the units are the package's own (systemd/hive-c0re.socket and
# .service, installed by nix/package.nix into lib/systemd/system and picked up
# through `systemd.packages`). This module only adds what NixOS needs on top,
# as drop-ins: enabling them (NixOS ignores [Install]), pointing ExecStart at
# the rendered config file, and a few host pieces (the hive-admin group, the
# config file, tmpfiles, boot.enableContainers, one polkit rule).
# Rejected: restating the units as `systemd.services.hive-c0re.serviceConfig`.
# That is the usual NixOS style, but it gives two copies of every directive
# (socket path, modes, hardening) that drift apart; here Debian and NixOS run
# the same unit text, and nix/tests/run checks the merged result.
{ config, lib, pkgs, ... }:
let
  cfg = config.services.hive-c0re;

  # Fixed by the units: hive-c0re.socket has SocketGroup=hive-admin and
  # ListenStream=/run/hyperhive/host.sock.
  adminGroup = "hive-admin";
  runtimeDir = "/run/hyperhive";
  configFile = "hive-c0re/config.json"; # under /etc

  # What the units already make writable (StateDirectory=, ReadWritePaths=).
  unitStateDir = "/var/lib/hyperhive";
  unitContainerDirs = { nspawn = "/etc/systemd/nspawn"; nixos = "/etc/nixos-containers"; };

  # Every key the daemon's config file accepts (src/config.rs, `Config`); the
  # daemon refuses unknown keys, so they are refused here already, at
  # evaluation. nix/tests/run compares this list with the struct.
  knownKeys = [
    "state_dir"
    "runtime_dir"
    "driver"
    "profile"
    "domain"
    "forge_url"
    "matrix_url"
    "stop_deadline_secs"
    "template_image"
    "nspawn_dir"
    "nixos_containers_dir"
    "nixos_build_command"
    "approval_command"
    "agent_cpu_quota"
    "agent_memory_max"
    "max_body_bytes"
    "message_retention_secs"
    "journal_directory"
  ];
  # Keys set by an option of their own (or fixed by the units): setting them
  # in `settings` too would leave two answers to one question.
  ownedKeys = {
    state_dir = "services.hive-c0re.stateDir";
    profile = "services.hive-c0re.profile";
    domain = "services.hive-c0re.domain";
    agent_cpu_quota = "services.hive-c0re.agentCpuQuota";
    agent_memory_max = "services.hive-c0re.agentMemoryMax";
    runtime_dir = "nothing: hive-c0re.socket fixes ${runtimeDir}";
  };
  settingNames = builtins.attrNames cfg.settings;
  unknownKeys = builtins.filter (k: !builtins.elem k knownKeys) settingNames;
  clashingKeys = builtins.filter (k: ownedKeys ? ${k}) settingNames;

  containerDir =
    if cfg.profile == "nixos"
    then cfg.settings.nixos_containers_dir or unitContainerDirs.nixos
    else cfg.settings.nspawn_dir or unitContainerDirs.nspawn;
  # Directories outside what the unit already opens under ProtectSystem=strict.
  extraWritable = builtins.filter
    (d: d != unitStateDir && !builtins.elem d (builtins.attrValues unitContainerDirs))
    [ cfg.stateDir containerDir ];

  daemonConfig = cfg.settings // {
    state_dir = cfg.stateDir;
    inherit (cfg) profile domain;
    agent_cpu_quota = cfg.agentCpuQuota;
    agent_memory_max = cfg.agentMemoryMax;
  };

  absolutePath = lib.types.strMatching "/[^[:space:]]+";
in
{
  options.services.hive-c0re = {
    enable = lib.mkEnableOption "hive-c0re, the host daemon of a hive of AI coding agents";

    package = lib.mkOption {
      type = lib.types.package;
      default = pkgs.callPackage ./nix/package.nix { };
      defaultText = lib.literalExpression "pkgs.callPackage ./nix/package.nix { }";
      description = ''
        The hive-c0re package (both binaries and the systemd units). The
        default builds this checkout, so the module and the units it uses
        always come from the same revision.
      '';
    };

    adminUsers = lib.mkOption {
      type = lib.types.listOf lib.types.str;
      default = [ ];
      example = [ "alice" ];
      description = ''
        Users added to the `${adminGroup}` group: they may use
        `${runtimeDir}/host.sock` (that is, `hivectl`) and open a shell in
        agent containers with `machinectl shell h-<agent>`.
      '';
    };

    domain = lib.mkOption {
      type = lib.types.nullOr lib.types.str;
      default = null;
      example = "hive.example.org";
      description = "The hive's public domain; enables the agents' URLs in `hivectl` output.";
    };

    profile = lib.mkOption {
      type = lib.types.enum [ "nixos" "nspawn" ];
      default = "nixos";
      description = ''
        How agent containers are made. `nixos`: NixOS containers
        (`container@h-<agent>.service`, configs in /etc/nixos-containers).
        `nspawn`: plain systemd-nspawn machines cloned from a template image
        (`systemd-nspawn@h-<agent>.service`, settings in /etc/systemd/nspawn).
      '';
    };

    stateDir = lib.mkOption {
      type = absolutePath;
      default = unitStateDir;
      description = "Where the daemon keeps its SQLite database and the agents' state.";
    };

    agentCpuQuota = lib.mkOption {
      type = lib.types.nullOr (lib.types.strMatching "[0-9]+(\\.[0-9]+)?%");
      default = "200%";
      description = "`CPUQuota=` of every agent container (200% = two CPUs); null for no limit.";
    };

    agentMemoryMax = lib.mkOption {
      type = lib.types.nullOr (lib.types.strMatching "[0-9]+[KMGTPE]?|[0-9]+(\\.[0-9]+)?%|infinity");
      default = "4G";
      description = "`MemoryMax=` of every agent container; null for no limit.";
    };

    settings = lib.mkOption {
      type = lib.types.attrsOf (lib.types.nullOr (lib.types.oneOf [ lib.types.str lib.types.int (lib.types.listOf lib.types.str) ]));
      default = { };
      example = { forge_url = "https://forge.hive.example.org"; stop_deadline_secs = 60; };
      description = ''
        Further keys of the daemon's JSON config file (/etc/${configFile}),
        written as given: ${lib.concatStringsSep ", " knownKeys}. Keys that
        have an option above are set there instead.
      '';
    };
  };

  config = lib.mkIf cfg.enable {
    assertions = [
      {
        assertion = unknownKeys == [ ];
        message = "services.hive-c0re.settings: unknown key(s) ${lib.concatStringsSep ", " unknownKeys}; the daemon accepts ${lib.concatStringsSep ", " knownKeys}.";
      }
      {
        assertion = clashingKeys == [ ];
        message = "services.hive-c0re.settings: ${lib.concatMapStringsSep "; " (k: "instead of ${k}, set ${ownedKeys.${k}}") clashingKeys}.";
      }
    ];

    # The units come from the package; NixOS ignores their [Install] section,
    # so mirror it here (nix/tests/run checks the two agree).
    systemd.packages = [ cfg.package ];
    systemd.sockets.hive-c0re.wantedBy = [ "sockets.target" ];
    systemd.services.hive-c0re = {
      wantedBy = [ "multi-user.target" ];
      # Restart the daemon when its config file changes.
      restartTriggers = [ config.environment.etc.${configFile}.source ];
      # The nixos profile builds container closures with nix.
      path = lib.optional (cfg.profile == "nixos") config.nix.package;
      serviceConfig = {
        # A drop-in adds to ExecStart=; the empty entry clears the unit's own.
        ExecStart = [ "" "${lib.getExe cfg.package} serve --config /etc/${configFile}" ];
        # ProtectSystem=strict: open what the unit does not already.
        ReadWritePaths = lib.mkIf (extraWritable != [ ]) extraWritable;
      };
    };

    environment.etc.${configFile}.text = builtins.toJSON daemonConfig;

    users.groups.${adminGroup}.members = cfg.adminUsers;

    # The unit's ReadWritePaths= are "-"-prefixed: a missing directory is
    # skipped, and the daemon could not create it under ProtectSystem=strict.
    systemd.tmpfiles.rules = [
      "d ${cfg.stateDir} 0750 root root -"
      "d ${containerDir} 0755 root root -"
    ];

    boot.enableContainers = lib.mkIf (cfg.profile == "nixos") true;

    # hivectl, its man pages and shell completions.
    environment.systemPackages = [ cfg.package ];

    # Members of hive-admin may open a shell in agent containers (machines
    # named h-<agent>, agent names being [a-z0-9-]{1,63}), and nothing else.
    # Other requests return nothing, so other rules and defaults still apply.
    security.polkit.enable = true;
    security.polkit.extraConfig = ''
      // hive-c0re: `machinectl shell h-<agent>` for members of ${adminGroup}.
      polkit.addRule(function (action, subject) {
        if (action.id === "org.freedesktop.machine1.shell" &&
            subject.isInGroup("${adminGroup}") &&
            /^h-[a-z0-9-]{1,63}$/.test(String(action.lookup("machine")))) {
          return polkit.Result.YES;
        }
      });
    '';
  };
}
