# Declarations of the NixOS options that NixOS-module.nix, nix/agent-module.nix
# and nix/tests/vm.nix set or read, with NixOS's names and defaults, so the
# stub module system can evaluate them. An option a module sets that NixOS
# does not have (a typo such as systemd.socket or listenStream) fails
# evaluation here as it would on NixOS.
#
# These declarations reproduce names and types, not NixOS's behaviour (unit
# generation, its value checks): render-units.nix and systemd-analyze cover
# that part, roughly. Two NixOS behaviours are copied because the module's
# checks are about them:
#   - systemd.nspawn.<name> makes /etc/systemd/nspawn one read-only link
#     into the store (nixos/modules/system/boot/systemd/nspawn.nix);
#   - system.build.toplevel is the system; here a JSON file describing it
#     (host name, rendered units, packages) instead of a directory.
{ lib, pkgs, config, ... }:
let
  t = lib.types;
  opt = type: default: lib.mkOption { inherit type default; };
  units = t.listOf t.str;
  # Options every NixOS unit kind has (nixos/lib/systemd-unit-options.nix).
  unitOptions = {
    enable = opt t.bool true;
    description = opt t.str "";
    documentation = opt units [ ];
    wantedBy = opt units [ ];
    requiredBy = opt units [ ];
    upheldBy = opt units [ ];
    wants = opt units [ ];
    requires = opt units [ ];
    upholds = opt units [ ];
    after = opt units [ ];
    before = opt units [ ];
    bindsTo = opt units [ ];
    partOf = opt units [ ];
    conflicts = opt units [ ];
    requisite = opt units [ ];
    onFailure = opt units [ ];
    onSuccess = opt units [ ];
    unitConfig = opt (t.attrsOf t.anything) { };
    restartTriggers = opt (t.listOf t.anything) [ ];
    reloadTriggers = opt (t.listOf t.anything) [ ];
  };
  unitsOf = extra: opt (t.attrsOf (t.submodule { options = unitOptions // extra; })) { };
in
{
  options = {
    systemd.packages = opt (t.listOf t.package) [ ];
    systemd.services = unitsOf {
      serviceConfig = opt (t.attrsOf t.anything) { };
      environment = opt (t.attrsOf (t.nullOr t.str)) { };
      path = opt (t.listOf t.package) [ ];
      script = opt t.lines "";
      preStart = opt t.lines "";
      postStart = opt t.lines "";
      restartIfChanged = opt t.bool true;
      stopIfChanged = opt t.bool true;
      startAt = opt (t.listOf t.str) [ ];
    };
    systemd.sockets = unitsOf {
      socketConfig = opt (t.attrsOf t.anything) { };
      listenStreams = opt (t.listOf t.str) [ ];
      listenDatagrams = opt (t.listOf t.str) [ ];
    };
    systemd.nspawn = opt
      (t.attrsOf (t.submodule {
        options = {
          execConfig = opt (t.attrsOf t.anything) { };
          filesConfig = opt (t.attrsOf t.anything) { };
          networkConfig = opt (t.attrsOf t.anything) { };
        };
      }))
      { };
    systemd.tmpfiles.rules = opt (t.listOf t.str) [ ];

    users.groups = opt
      (t.attrsOf (t.submodule ({ name, ... }: {
        options = {
          name = opt t.str name;
          gid = opt (t.nullOr t.int) null;
          members = opt (t.listOf t.str) [ ];
        };
      })))
      { };
    users.users = opt
      (t.attrsOf (t.submodule ({ name, ... }: {
        options = {
          name = opt t.str name;
          isNormalUser = opt t.bool false;
          isSystemUser = opt t.bool false;
          uid = opt (t.nullOr t.int) null;
          home = opt t.str "/var/empty";
          createHome = opt t.bool false;
          description = opt t.str "";
          extraGroups = opt (t.listOf t.str) [ ];
          group = opt t.str "";
          password = opt (t.nullOr t.str) null;
        };
      })))
      { };

    # environment.etc.<name>.source is derived from .text, as NixOS does with
    # pkgs.writeText.
    environment.etc = opt
      (t.attrsOf (t.submodule ({ name, config, ... }: {
        options = {
          enable = opt t.bool true;
          target = opt t.str name;
          text = opt (t.nullOr t.lines) null;
          source = lib.mkOption { type = t.path; };
          mode = opt t.str "symlink";
          user = opt t.str "+0";
          group = opt t.str "+0";
        };
        config.source = lib.mkIf (config.text != null)
          (lib.mkDefault (pkgs.writeText "etc-${baseNameOf name}" config.text));
      })))
      { };
    environment.systemPackages = opt (t.listOf t.package) [ ];
    environment.variables = opt (t.attrsOf t.str) { };

    boot.enableContainers = opt t.bool true;
    virtualisation.memorySize = opt t.int 1024;
    virtualisation.diskSize = opt t.int 1024;
    boot.isContainer = opt t.bool false;
    # nixos/modules/config/sysctl.nix (values: int, string or bool).
    boot.kernel.sysctl = opt (t.attrsOf t.anything) { };
    networking.hostName = opt (t.strMatching "^$|^[[:alnum:]]([[:alnum:]_-]{0,61}[[:alnum:]])?$") "nixos";
    nix.package = opt t.package pkgs.nix;
    nixpkgs.overlays = opt (t.listOf t.anything) [ ];
    nixpkgs.pkgs = opt t.anything null;
    nixpkgs.config = opt (t.attrsOf t.anything) { };
    system.stateVersion = opt t.str "26.05";
    system.build.toplevel = opt t.package (pkgs.writeText "nixos-system-${config.networking.hostName}" (builtins.toJSON {
      inherit (config.networking) hostName;
      inherit (config.boot) isContainer;
      units = import ./render-units.nix { inherit config; };
      systemPackages = map (p: p.name) config.environment.systemPackages;
      environment = config.environment.variables;
      users = builtins.mapAttrs (_: u: { inherit (u) uid group home isSystemUser; }) config.users.users;
      groups = builtins.mapAttrs (_: g: { inherit (g) gid; }) config.users.groups;
    }));

    # nixos/modules/services/web-servers/nginx (default.nix, vhost-options.nix,
    # location-options.nix): the options the module sets or reads.
    services.nginx = {
      enable = opt t.bool false;
      user = opt t.str "nginx";
      group = opt t.str "nginx";
      recommendedProxySettings = opt t.bool false;
      virtualHosts = opt
        (t.attrsOf (t.submodule {
          options = {
            serverName = opt (t.nullOr t.str) null;
            forceSSL = opt t.bool false;
            enableACME = opt t.bool false;
            basicAuth = opt (t.attrsOf t.str) { };
            basicAuthFile = opt (t.nullOr t.path) null;
            extraConfig = opt t.lines "";
            locations = opt
              (t.attrsOf (t.submodule {
                options = {
                  proxyPass = opt (t.nullOr t.str) null;
                  proxyWebsockets = opt t.bool false;
                  # NixOS: defaults to services.nginx.recommendedProxySettings
                  recommendedProxySettings = opt t.bool config.services.nginx.recommendedProxySettings;
                  basicAuth = opt (t.attrsOf t.str) { };
                  basicAuthFile = opt (t.nullOr t.path) null;
                  return = opt (t.nullOr t.str) null;
                  extraConfig = opt t.lines "";
                  priority = opt t.int 1000;
                };
              }))
              { };
          };
        }))
        { };
    };

    # nixos/modules/security/acme and networking/firewall: what the README's
    # example sets beside the nginx virtual host.
    security.acme.acceptTerms = opt t.bool false;
    security.acme.defaults.email = opt (t.nullOr t.str) null;
    networking.firewall.allowedTCPPorts = opt (t.listOf t.port) [ ];

    security.polkit.enable = opt t.bool false;
    security.polkit.extraConfig = opt t.lines "";

    meta.maintainers = opt (t.listOf t.raw) [ ];
    assertions = opt (t.listOf t.anything) [ ];
    warnings = opt (t.listOf t.str) [ ];
  };

  # nixos/modules/system/boot/systemd/nspawn.nix: the whole directory
  # becomes one store path as soon as any systemd.nspawn.<name> is set.
  config.environment.etc."systemd/nspawn" = lib.mkIf (config.systemd.nspawn != { }) {
    source = pkgs.writeText "nspawn-units" (builtins.toJSON config.systemd.nspawn);
  };
}
