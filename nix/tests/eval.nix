# Evaluate NixOS-module.nix with the stub lib, the NixOS option declarations
# it needs and a fake package set, and return what the checks look at.
#
#   nix-instantiate --store dummy:// --eval --strict --json nix/tests/eval.nix \
#     --argstr pkgOut /tmp/x/pkg --argstr storeDir /tmp/x/store \
#     [--arg settings '{ services.hive-c0re = { ... }; }']
#
# `pkgOut` is the package's out path (the harness fills it by running the
# package's postInstall). `storeDir` is where generated files would go: the
# stub's writers trace them on stderr and the harness writes them there.
# `settings` is one more NixOS module.
#
# As on NixOS, pkgs is made from the configuration's nixpkgs.overlays (the
# module's overlay provides pkgs.hive-c0re).
{ pkgOut
, storeDir ? "/nix/store"
, settings ? { services.hive-c0re.enable = true; }
, module ? ../../NixOS-module.nix
}:
let
  lib = import ./stub-nixpkgs/lib.nix;
  overlay = { nixpkgs.overlays = [ (import ../overlay.nix) ]; };
  pkgs = import ./stub-nixpkgs/pkgs.nix {
    outPath = pkgOut;
    inherit storeDir;
    traceWrites = true;
    inherit (evaluated.config.nixpkgs) overlays;
  };
  evaluated = lib.evalModules {
    # the overlay as the flake's nixosModules.default adds it
    modules = [ ./stub-nixpkgs/nixos/options.nix module overlay settings ];
    specialArgs = { inherit pkgs; };
  };
  c = evaluated.config;
  failed = map (a: a.message) (builtins.filter (a: !a.assertion) c.assertions);
  cfg = c.services.hive-c0re;
  package = cfg.package;
in
if failed != [ ] then throw "Failed assertions:\n- ${builtins.concatStringsSep "\n- " failed}"
else {
  inherit (c) systemd users security boot warnings meta;
  environment = {
    systemPackages = map toString c.environment.systemPackages;
    etc = builtins.mapAttrs (_: e: { inherit (e) text mode; source = toString e.source; }) c.environment.etc;
  };
  services.nginx = { inherit (c.services.nginx) enable user virtualHosts; };
  services.hive-c0re = {
    inherit (cfg) enable socketActivation settings dashboard;
    package = toString cfg.package;
    agents = builtins.mapAttrs (_: a: { path = toString a.path; }) cfg.agents;
  };
  # The keys the module declares under settings (compared with src/config/mod.rs).
  settingsKeys = builtins.attrNames evaluated.options.services.hive-c0re.settings.type.module.options;
  units = import ./stub-nixpkgs/nixos/render-units.nix { config = c; };
  # services.nginx.virtualHosts as nginx server blocks, as NixOS writes them
  nginxServers = import ./stub-nixpkgs/nixos/render-nginx.nix { config = c; };
  package = {
    inherit (package) pname version;
    inherit (package.buildAttrs) postInstall cargoTestFlags outputs outputMan;
    meta = { inherit (package.meta) mainProgram; };
  };
}
