# services.hive-c0re: the hive's host daemon on NixOS.
#
# Decisions:
# - The units are the package's own (systemd/hive-c0re.socket and .service,
#   installed by nix/package.nix into lib/systemd/system and picked up through
#   `systemd.packages`). This module adds only what NixOS needs on top, as
#   drop-ins. Rejected: restating the units as `serviceConfig`, which gives
#   two copies of every directive that drift apart; Debian and NixOS run the
#   same unit text, and nix/tests/run checks the merged result.
# - `settings` is RFC 42: the daemon's JSON config file, rendered with
#   formats.json. Every key the daemon knows is declared with its type and
#   default; the daemon refuses unknown keys at start, so an unknown key
#   (a typo) fails evaluation here already, naming it.
# - The default profile is `nixos`, and it spawns out of the box: every agent
#   container runs a NixOS system built from nix/agent-module.nix (hive-agent
#   with Claude Code) when the host is built, and the default
#   `nixos_build_command` only prints the prebuilt system of `h-<name>`.
#   Spawning therefore needs no nix evaluation, no nixpkgs checkout and no
#   network at run time. Rejected: a build command running `nix build` at
#   spawn time (needs a flake or a nixpkgs path on the host and minutes per
#   agent); an nspawn template image built here (the image recipe belongs to
#   the agent harness; see nix/README.md).
# - The dashboard (web.sock) is the daemon's second listener with host.sock's
#   audience: hive-c0re-web.socket is the package's unit too, enabled here
#   like hive-c0re.socket. nginx in front is opt-in (`dashboard.nginx`) and
#   refuses to evaluate without its own authentication (or an explicit
#   opt-out): nginx joins hive-admin to reach the 0660 socket, so whoever
#   passes nginx is an operator. Rejected: a TCP listener in the daemon
#   (a second door with a login of its own).
{ config, lib, pkgs, ... }:
let
  inherit (lib) mkOption mkIf mkMerge mkDefault types;
  cfg = config.services.hive-c0re;
  s = cfg.settings;
  settingsFormat = pkgs.formats.json { };
  hostConfig = config;

  # Fixed by the units: hive-c0re.socket has SocketGroup=hive-admin and
  # ListenStream=/run/hyperhive/host.sock (hive-c0re-web.socket the same
  # group and /run/hyperhive/web.sock); the service StateDirectory=hyperhive
  # and ReadWritePaths= on the two container settings directories.
  adminGroup = "hive-admin";
  runtimeDir = "/run/hyperhive";
  webSocket = "${runtimeDir}/web.sock";
  dash = cfg.dashboard;
  configPath = "hive-c0re/config.json"; # under /etc
  unitStateDir = "/var/lib/hyperhive";
  unitContainerDirs = [ "/etc/systemd/nspawn" "/etc/nixos-containers" ];

  client = cfg.package.client or cfg.package;
  absolutePath = types.strMatching "/[^[:space:]]*";
  opt = type: default: description: mkOption { inherit type default description; };
  atLeast = floor: n: if n > floor then n else floor;

  # The unit's fd budget (systemd/hive-c0re.service) covers the default
  # hive; a larger max_agents raises it here, so a full hive is refused at
  # spawn by the daemon's own count, never by a failed bind. Worst case per
  # agent: its two sockets (mcp.sock, egress.sock) plus agent_max_connections
  # fds of connections (every one an agent may open; an egress connection
  # takes two), and 1,024 for the rest (host.sock clients, the database,
  # journalctl). The fd store holds two sockets per agent.
  unitFds = 65536;
  unitFdStore = 4096;
  fds = atLeast unitFds (s.max_agents * (s.agent_max_connections + 2) + 1024);
  fdStore = atLeast unitFdStore (2 * s.max_agents + 2);

  # The host's inotify limits (issue 44): every instance and watch of an
  # agent's container counts against root's as well, so root's must hold
  # max_agents containers at their caps, each with its own services (16
  # instances, 1,024 watches), plus the kernel's default (128 instances)
  # and 65,536 watches for the host's own root processes. The daemon
  # computes the same sums and warns at start when the host has less
  # (src/systemd/dbus/inotify.rs, host_needs).
  inotifyInstances = s.max_agents * (s.agent_inotify_instances + 16) + 128;
  inotifyWatches = s.max_agents * (s.agent_inotify_watches + 1024) + 65536;

  # Every key of the daemon's config file (src/config/mod.rs, `Config`):
  # nix/settings-options.nix. nix/tests/run compares these names with the struct.
  settingsOptions = import ./nix/settings-options.nix {
    inherit lib s opt absolutePath unitStateDir runtimeDir buildCommand;
  };
  knownKeys = builtins.attrNames settingsOptions;
  unknownKeys = lib.subtractLists knownKeys (builtins.attrNames s);

  configFile = settingsFormat.generate "hive-c0re-config.json" s;

  containerDir = if s.profile == "nixos" then s.nixos_containers_dir else s.nspawn_dir;
  # Directories outside what the unit already opens under ProtectSystem=strict
  # (the meta flake: update_meta_inputs writes and commits its flake.lock).
  extraWritable = builtins.filter
    (d: d != unitStateDir && !builtins.elem d unitContainerDirs)
    ([ s.state_dir containerDir ] ++ lib.optional (s.meta_flake != null) s.meta_flake);

  # The NixOS system of one agent container (as nixos-containers does it):
  # the agent module, this host's pkgs, `agentConfig`, then `extra`.
  agentEval = hostName: extra: import "${toString pkgs.path}/nixos/lib/eval-config.nix" {
    system = null;
    modules = [
      ./nix/agent-module.nix
      {
        nixpkgs.pkgs = pkgs;
        boot.isContainer = true;
        networking.hostName = mkDefault hostName;
        system.stateVersion = mkDefault hostConfig.system.stateVersion;
        services.hive-agent = {
          enable = true;
          package = mkDefault cfg.package;
        };
      }
      cfg.agentConfig
    ] ++ extra;
  };
  agentSystem = hostName: extra: (agentEval hostName extra).config.system.build.toplevel;
  # Undeclared agents: "" keeps the host name nspawn gives (h-<name>).
  commonEval = agentEval "" [ ];
  commonSystem = commonEval.config.system.build.toplevel;

  # The system of an agent whose approved config repo has agent.nix, built
  # at deploy time (nix-build, through nix-daemon): nix/agent-module.nix
  # with the hive-agent and Claude Code of the common agent system, then
  # the exported tree's agent.nix. Its pkgs are nixpkgs at this host's
  # pkgs.path, made by eval-config from the nixpkgs.* options (agent.nix may
  # set nixpkgs.config). Not in it: `agentConfig`, `agents.<name>.config`
  # and this host's overlays (Nix functions a build at run time cannot be
  # handed). The arguments after `tree` are for nix/tests/run's stub.
  agentNixSystem = pkgs.writeText "hive-c0re-agent-nix-system.nix" ''
    { tree
    , pkgs ? null
    , storePath ? builtins.storePath
    , agentModule ? ${./nix}/agent-module.nix
    }:
    (import ${toString pkgs.path}/nixos/lib/eval-config.nix {
      system = "${pkgs.stdenv.hostPlatform.system}";
      inherit pkgs;
      modules = [
        agentModule
        ({ lib, ... }: {
          boot.isContainer = true;
          networking.hostName = lib.mkDefault "";
          system.stateVersion = lib.mkDefault "${hostConfig.system.stateVersion}";
          services.hive-agent = {
            enable = true;
            package = lib.mkDefault (storePath "${commonEval.config.services.hive-agent.package}");
            claudePackage = lib.mkDefault (storePath "${commonEval.config.services.hive-agent.claudePackage}");
          };
        })
        (/. + tree + "/agent.nix")
      ];
    }).config.system.build.toplevel
  '';

  buildCommand = pkgs.writeShellScript "hive-c0re-agent-system" ''
    # hive-c0re nixos_build_command: the NixOS system of agent container $1
    # (h-<name>). With $2 and $3 (an approved config's exported tree, which
    # has agent.nix, and its commit): that module built now, on top of the
    # agent module. Alone: the prebuilt system, built with the host, so
    # nothing builds here.
    if [ "$#" -ge 2 ]; then
      exec nix-build --no-out-link ${agentNixSystem} --argstr tree "$2"
    fi
    case "$1" in
    ${lib.concatStrings (lib.mapAttrsToList (n: a: "  ${lib.escapeShellArg "h-${n}"}) echo ${a.path} ;;\n") cfg.agents)}  *) echo ${commonSystem} ;;
    esac
  '';

  identPattern = "[a-z0-9-]{1,63}";
  badAgentNames = builtins.filter (n: builtins.match identPattern n == null) (builtins.attrNames cfg.agents);
  # A systemd credential name, as the daemon takes it (CredentialName).
  badCredentialNames = builtins.filter (n: builtins.match "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}" n == null)
    (builtins.attrNames cfg.modelGateway.credentials);
  spawnNames = builtins.filter (n: cfg.agents.${n}.spawn) (builtins.attrNames cfg.agents);
  spawnScript = pkgs.writeShellScript "hive-c0re-spawn-agents" ''
    # Spawn the agents declared with spawn = true that the hive does not have.
    set -eu
    known=$(${lib.getExe' client "hivectl"} list)
    for name in ${lib.escapeShellArgs spawnNames}; do
      case $'\n'"$known"$'\n' in
        *$'\n'"$name"$'\n'*) ;;
        *) ${lib.getExe' client "hivectl"} spawn "$name" ;;
      esac
    done
  '';

  # socketActivation = false: the package's service unit without its
  # dependencies on hive-c0re.socket and hive-c0re-web.socket (the daemon
  # then binds host.sock and web.sock itself). The egress proxy's units come
  # as they are: its socket is how it starts, whoever binds host.sock.
  unactivatedUnits = pkgs.runCommand "hive-c0re-units-without-socket" { } ''
    mkdir -p "$out/lib/systemd/system"
    cp ${cfg.package}/lib/systemd/system/hive-c0re-egress.socket \
      ${cfg.package}/lib/systemd/system/hive-c0re-egress.service "$out/lib/systemd/system/"
    sed -e '/^Requires=hive-c0re\.socket$/d' -e 's/^After=hive-c0re\.socket /After=/' \
      -e '/^Wants=hive-c0re-web\.socket$/d' -e '/^After=hive-c0re-web\.socket$/d' \
      ${cfg.package}/lib/systemd/system/hive-c0re.service >"$out/lib/systemd/system/hive-c0re.service"
  '';

  nspawnEtc = config.environment.etc."systemd/nspawn" or { enable = false; };
in
{
  meta.maintainers = [ (import ./nix/maintainers.nix).hive-c0re ];

  options.services.hive-c0re = {
    enable = lib.mkEnableOption "hive-c0re, the host daemon of a hive of AI coding agents";

    package = lib.mkPackageOption pkgs "hive-c0re" {
      extraDescription = ''
        Its `client` output (`hivectl`, man pages, completions) is installed
        system-wide. Out of nixpkgs, `pkgs.hive-c0re` comes from this
        checkout's overlay (nix/overlay.nix; the flake's
        `nixosModules.default` adds it).
      '';
    };

    socketActivation = mkOption {
      type = types.bool;
      default = true;
      description = ''
        Whether systemd owns the operator socket (`hive-c0re.socket`,
        ${runtimeDir}/host.sock) and the dashboard's (`hive-c0re-web.socket`,
        ${webSocket}): they listen from boot, clients wait instead of
        failing while the daemon restarts, and their mode and group come from
        the units. When false, only the service is installed and the daemon
        binds both sockets itself; the module then gives host.sock group
        ${adminGroup} and mode 0660, and web.sock (which the daemon makes
        0660) group ${adminGroup}, once the daemon is ready.
      '';
    };

    dashboard = {
      enable = opt types.bool true ''
        Whether operators (members of ${adminGroup}, exactly who may use
        host.sock) may reach the operator's dashboard on ${webSocket}, plain
        HTTP/1.1 on a Unix socket: through `dashboard.nginx`, or from a
        workstation with `ssh -L 8080:${webSocket} <host>` and
        http://localhost:8080/. With socket activation its socket unit,
        `hive-c0re-web.socket`, listens from boot.

        The daemon always serves the dashboard. When false,
        `hive-c0re-web.socket` is masked and the daemon binds web.sock
        itself, mode 0660 root:root: only root can connect.
      '';

      nginx = {
        enable = opt types.bool false ''
          Whether to put nginx in front of the dashboard, as the virtual host
          `settings.domain`, so the agents' URLs in `hivectl` output
          (`https://<domain>/agent/<name>/`) open their dashboard pages.
          It proxies everything to ${webSocket}, passes the `Host` header
          through (the dashboard refuses a state-changing request whose
          `Origin` does not name its `Host`) and does not buffer the live
          updates under /events/.

          nginx's user joins ${adminGroup} to connect to the 0660 socket.
          That makes nginx an operator: whoever gets past this virtual
          host, and any other nginx configuration on the machine that
          proxies to ${webSocket}, acts with an operator's rights, and
          nginx's processes may also use host.sock and
          `machinectl shell h-<agent>` (the polkit rule), as every member
          of ${adminGroup} may.
          Hence `basicAuthFile` (or `allowUnauthenticated`) is required.

          For HTTPS add to the virtual host yourself, e.g.
          `services.nginx.virtualHosts.<domain> = { enableACME = true;
          forceSSL = true; }`. Serve it on the default port (443, or 80):
          the proxied `Host` is nginx's `$host`, which has no port, and
          the dashboard then refuses forms sent to another port.
        '';

        basicAuthFile = mkOption {
          type = types.nullOr absolutePath;
          default = null;
          example = "/run/secrets/hive-dashboard.htpasswd";
          description = ''
            htpasswd file (`htpasswd -c <file> <user>`) of the people who
            may use the dashboard through nginx; set as the virtual host's
            `basicAuthFile`. A path on the host as a string, not a Nix path:
            a file copied into the Nix store is readable by every local
            user. It must be readable by nginx's user.
          '';
        };

        allowUnauthenticated = opt types.bool false ''
          Put nginx in front without `basicAuthFile`. Everyone who can
          reach the virtual host can then start, stop and spawn agents,
          approve their requests and message them, as a member of
          ${adminGroup} can. Only set this when something else
          authenticates every request before it reaches nginx (a VPN, an
          authenticating proxy, `listen` on an address only operators
          reach).
        '';
      };
    };

    modelGateway = {
      credentials = mkOption {
        type = types.attrsOf absolutePath;
        default = { };
        example = { anthropic = "/run/secrets/anthropic-api-key"; };
        description = ''
          Credentials the hive's model gateway holds for the agents (issue
          46), by name: each the path of a file on the host (a string, not
          a Nix path, which would copy the secret into the world-readable
          store; an agenix or sops-nix secret's path fits) holding one
          Anthropic API key or one long-lived token of `claude setup-token`.
          Each is given to `hive-c0re-egress.service` as
          `LoadCredential=NAME:PATH`: systemd reads the file as root and
          hands the service a private copy; no agent, state directory or
          config file ever holds the value. `settings.model_credential`
          names the one every agent's requests carry. Names: 1 to 64 of
          A-Z a-z 0-9 _ . -, starting with a letter or digit.
        '';
      };

      upstream = opt types.str "https://api.anthropic.com" ''
        Where the model gateway sends the agents' requests: an `https://`
        URL, host and port only.
      '';

      extraCA = mkOption {
        type = types.nullOr absolutePath;
        default = null;
        description = ''
          A PEM file of CA certificates the model gateway trusts for its
          upstream besides the host's store (a relay of your own).
        '';
      };
    };

    settings = mkOption {
      type = types.submodule {
        freeformType = settingsFormat.type;
        options = settingsOptions;
      };
      default = { };
      example = lib.literalExpression ''
        {
          domain = "hive.example.org";
          agent_memory_max = "8G";
          stop_deadline_secs = 60;
        }
      '';
      description = ''
        The daemon's configuration file (/etc/${configPath}), as JSON. The
        daemon refuses keys it does not know, so does this module.
      '';
    };

    agentConfig = mkOption {
      type = types.deferredModule;
      default = { };
      example = lib.literalExpression ''
        { pkgs, ... }: { environment.systemPackages = [ pkgs.python3 pkgs.gnumake ]; }
      '';
      description = ''
        NixOS configuration added to every agent container (nixos profile),
        on top of nix/agent-module.nix, which runs hive-agent with Claude Code.
        The agents' systems are built with this host's `pkgs`, so nixpkgs
        settings (`nixpkgs.config.allowUnfree`, overlays) belong in the
        host's configuration, not here: NixOS refuses `nixpkgs.*` options
        inside a system given an externally created nixpkgs.
      '';
    };

    agents = mkOption {
      default = { };
      example = lib.literalExpression ''
        {
          scout = { };
          builder.config = { pkgs, ... }: { environment.systemPackages = [ pkgs.cargo pkgs.rustc ]; };
        }
      '';
      description = ''
        Agents declared here (names as `hivectl` takes them: a-z, 0-9 and
        `-`, at most 63). Each gets its own NixOS system (nixos profile) and
        is spawned at boot unless the hive has it already.
      '';
      type = types.attrsOf (types.submodule ({ name, config, ... }: {
        options = {
          config = mkOption {
            type = types.deferredModule;
            default = { };
            description = "NixOS configuration of this agent's container, on top of `agentConfig`.";
          };
          spawn = mkOption {
            type = types.bool;
            default = true;
            description = ''
              Spawn the agent at boot (`hivectl spawn`) if the hive does not
              have it. When false only its system is declared, for a later
              `hivectl spawn ${name}`.
            '';
          };
          path = mkOption {
            type = types.package;
            description = "The agent's NixOS system, built with the host (set by the module).";
          };
        };
        config.path = mkDefault (agentSystem "h-${name}" [ config.config ]);
      }));
    };
  };

  config = mkIf cfg.enable (mkMerge [
    {
      assertions = [
        {
          assertion = unknownKeys == [ ];
          message = "services.hive-c0re.settings: unknown key(s) ${lib.concatStringsSep ", " unknownKeys}; hive-c0re refuses them. Known keys: ${lib.concatStringsSep ", " knownKeys}.";
        }
        {
          assertion = badCredentialNames == [ ];
          message = "services.hive-c0re.modelGateway.credentials: ${lib.concatStringsSep ", " badCredentialNames}: a credential name is 1 to 64 of A-Z a-z 0-9 _ . -, starting with a letter or digit.";
        }
        {
          assertion = s.model_credential == null || builtins.hasAttr s.model_credential cfg.modelGateway.credentials;
          message = "services.hive-c0re.settings.model_credential: ${toString s.model_credential} is not one of services.hive-c0re.modelGateway.credentials (${lib.concatStringsSep ", " (builtins.attrNames cfg.modelGateway.credentials)}).";
        }
        {
          assertion = s.runtime_dir == runtimeDir;
          message = "services.hive-c0re.settings.runtime_dir: ${s.runtime_dir} is not possible; hive-c0re.socket fixes ${runtimeDir}.";
        }
        {
          assertion = badAgentNames == [ ];
          message = "services.hive-c0re.agents: ${lib.concatStringsSep ", " badAgentNames}: an agent name is 1 to 63 of a-z, 0-9 and '-'.";
        }
        {
          assertion = s.profile != "nixos" || config.boot.enableContainers;
          message = "services.hive-c0re: the nixos profile runs agents as NixOS containers (container@.service); set boot.enableContainers = true, or settings.profile = \"nspawn\".";
        }
        {
          assertion = !(s.profile == "nspawn" && s.nspawn_dir == "/etc/systemd/nspawn" && nspawnEtc.enable);
          message = "services.hive-c0re: the nspawn profile writes agents' .nspawn files into /etc/systemd/nspawn, but systemd.nspawn.<name> (${lib.concatStringsSep ", " (builtins.attrNames config.systemd.nspawn)}) makes that directory a read-only link into the Nix store. Remove those systemd.nspawn definitions, or use settings.profile = \"nixos\".";
        }
      ];

      # Units from the package; NixOS ignores their [Install] section, so it
      # is mirrored here (nix/tests/run checks the two agree).
      systemd.packages = [ (if cfg.socketActivation then cfg.package else unactivatedUnits) ];
      systemd.services.hive-c0re = {
        wantedBy = [ "multi-user.target" ];
        # Restart the daemon when its config file changes.
        restartTriggers = [ configFile ];
        # The programs the daemon runs by name: git (config repos: seeding,
        # fetching, reviewing) in both profiles, and nix for build commands
        # that call it (nixos profile; the store is read-only under
        # ProtectSystem=strict, nix-daemon writes it). journalctl and
        # systemd-run come with systemd, which NixOS puts on every unit's
        # PATH; git does not, so without it here seeding a repo fails.
        path = [ pkgs.git ] ++ lib.optional (s.profile == "nixos") config.nix.package;
        environment = mkMerge [
          (mkIf (s.profile == "nixos") { NIX_REMOTE = "daemon"; })
          (mkIf (fdStore > unitFdStore) { FDSTORE = toString fdStore; })
        ];
        serviceConfig = {
          LimitNOFILE = mkIf (fds > unitFds) fds;
          FileDescriptorStoreMax = mkIf (fdStore > unitFdStore) fdStore;
          # A drop-in adds to ExecStart=; the empty entry clears the unit's own.
          ExecStart = [ "" "${lib.getExe cfg.package} serve --config /etc/${configPath}" ];
          # ProtectSystem=strict: open what the unit does not already.
          ReadWritePaths = mkIf (extraWritable != [ ]) extraWritable;
          # Without the socket units the daemon binds both itself (host.sock
          # 0660 root:hive-admin already); web.sock gets the group here.
          ExecStartPost = mkIf (!cfg.socketActivation) ([
            "${lib.getExe' pkgs.coreutils "chgrp"} ${adminGroup} ${runtimeDir}/host.sock"
            "${lib.getExe' pkgs.coreutils "chmod"} 0660 ${runtimeDir}/host.sock"
          ] ++ lib.optional dash.enable "${lib.getExe' pkgs.coreutils "chgrp"} ${adminGroup} ${webSocket}");
        }
        // lib.optionalAttrs (s.swarm != null) {
          # A swarm hive talks TCP to its NATS servers: the unit has no
          # network otherwise (PrivateNetwork=yes, IPAddressDeny=any,
          # AF_UNIX only). The empty IPAddressDeny= clears the unit's list.
          PrivateNetwork = false;
          IPAddressDeny = "";
          RestrictAddressFamilies = [ "AF_UNIX" "AF_INET" "AF_INET6" ];
        };
      };

      environment.etc.${configPath}.source = configFile;

      # Above nixpkgs' own defaults (mkDefault), below an operator's plain
      # setting (whose lower value the daemon then warns about at start).
      boot.kernel.sysctl = {
        "fs.inotify.max_user_instances" = lib.mkOverride 900 inotifyInstances;
        "fs.inotify.max_user_watches" = lib.mkOverride 900 inotifyWatches;
      };

      # The agents' egress proxy (hive-c0re-egress.service, started by its
      # socket): without it every agent request through the hive is a 502.
      systemd.sockets.hive-c0re-egress.wantedBy = [ "sockets.target" ];
      # The model gateway in it: its credentials (systemd credentials, read
      # by systemd from the operator's files, never through the store), its
      # upstream and an extra CA.
      systemd.services.hive-c0re-egress = {
        serviceConfig.LoadCredential =
          lib.mapAttrsToList (name: path: "${name}:${path}") cfg.modelGateway.credentials;
        environment = {
          HIVE_MODEL_UPSTREAM = cfg.modelGateway.upstream;
        } // lib.optionalAttrs (cfg.modelGateway.extraCA != null) {
          HIVE_MODEL_CA = cfg.modelGateway.extraCA;
        };
      };

      # Members may use host.sock (hivectl) and `machinectl shell h-<agent>`:
      # users.users.<name>.extraGroups = [ "hive-admin" ].
      users.groups.${adminGroup} = { };

      # The unit's ReadWritePaths= are "-"-prefixed: a missing directory is
      # skipped, and the daemon could not create it under ProtectSystem=strict.
      systemd.tmpfiles.rules = [
        "d ${s.state_dir} 0750 root root -"
        "d ${containerDir} 0755 root root -"
      ];

      # hivectl, its man pages and shell completions (not the daemon).
      environment.systemPackages = [ client ];

      # Members of hive-admin may open a shell in agent containers (machines
      # named h-<agent>, agent names being [a-z0-9-]{1,63}), and nothing else.
      # Other requests return nothing, so other rules and defaults still apply.
      security.polkit.enable = mkDefault true;
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
    }
    (mkIf cfg.socketActivation {
      systemd.sockets.hive-c0re.wantedBy = [ "sockets.target" ];
      # The service Wants= it; disabled, it is masked (enable = false), so
      # the daemon binds web.sock itself, root-only.
      systemd.sockets.hive-c0re-web = if dash.enable then { wantedBy = [ "sockets.target" ]; } else { enable = false; };
    })
    (mkIf dash.nginx.enable {
      assertions = [
        {
          assertion = s.domain != null;
          message = "services.hive-c0re.dashboard.nginx.enable: set services.hive-c0re.settings.domain, the virtual host's name (the agents' URLs are https://<domain>/agent/<name>/).";
        }
        {
          assertion = dash.enable;
          message = "services.hive-c0re.dashboard.nginx.enable needs services.hive-c0re.dashboard.enable = true (nginx reaches the dashboard as a member of ${adminGroup}).";
        }
        {
          assertion = dash.nginx.basicAuthFile != null || dash.nginx.allowUnauthenticated;
          message = "services.hive-c0re.dashboard.nginx: set basicAuthFile to an htpasswd file of the operators (nginx joins ${adminGroup}, so everyone who gets past it is an operator), or allowUnauthenticated = true if something in front of nginx already authenticates every request.";
        }
      ];
      services.nginx.enable = true;
      # (optionalAttrs: the assertion above names a missing domain.)
      services.nginx.virtualHosts = lib.optionalAttrs (s.domain != null) {
        ${s.domain} = {
          # At the server level: every location below inherits it.
          basicAuthFile = dash.nginx.basicAuthFile;
          locations."/" = {
            proxyPass = "http://unix:${webSocket}";
            # Host $host: the dashboard's CSRF check compares Origin with it.
            recommendedProxySettings = true;
            # The rows' URLs end in a slash; the dashboard's page does not.
            extraConfig = ''
              rewrite "^(/agent/[a-z0-9-]{1,63})/$" $1 break;
            '';
          };
          # Server-Sent Events (the live roster and logs): each event is
          # passed on as it comes, over one long HTTP/1.1 response.
          locations."/events/" = {
            proxyPass = "http://unix:${webSocket}";
            recommendedProxySettings = true;
            extraConfig = ''
              proxy_buffering off;
              proxy_cache off;
              proxy_http_version 1.1;
            '';
          };
        };
      };
      # To connect to the 0660 root:${adminGroup} socket: nginx is trusted.
      users.groups.${adminGroup}.members = [ config.services.nginx.user ];
    })
    (mkIf (spawnNames != [ ]) {
      systemd.services.hive-c0re-agents = {
        description = "Spawn the agents declared in services.hive-c0re.agents";
        wantedBy = [ "multi-user.target" ];
        requires = [ "hive-c0re.service" ];
        after = [ "hive-c0re.service" ];
        serviceConfig = {
          Type = "oneshot";
          RemainAfterExit = true;
          ExecStart = "${spawnScript}";
        };
      };
    })
  ]);
}
