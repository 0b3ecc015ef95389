# Declarations of the NixOS options NixOS-module.nix sets, with NixOS's names
# and defaults, so the stub module system can evaluate it. An option the
# module sets that NixOS does not have (a typo such as systemd.socket or
# listenStream) fails evaluation here as it would on NixOS.
#
# These declarations reproduce names and types, not NixOS's behaviour (unit
# generation, its value checks): nix/tests/render-units.nix and
# systemd-analyze cover that part, roughly.
{ lib, pkgs, ... }:
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

    # environment.etc.<name>.source is derived from .text, as NixOS does with
    # pkgs.writeText; here it is a fake store path named after the content.
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
          (lib.mkDefault "/nix/store/${builtins.substring 0 32 (builtins.hashString "sha256" config.text)}-etc-${baseNameOf name}");
      })))
      { };
    environment.systemPackages = opt (t.listOf t.package) [ ];

    boot.enableContainers = opt t.bool true;
    nix.package = opt t.package pkgs.nix;

    security.polkit.enable = opt t.bool false;
    security.polkit.extraConfig = opt t.lines "";

    assertions = opt (t.listOf t.anything) [ ];
    warnings = opt (t.listOf t.str) [ ];
  };
}
