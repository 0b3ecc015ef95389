# Evaluate NixOS-module.nix with the stub lib, the NixOS option declarations
# it needs and a fake package set, and return what the checks look at.
#
#   nix-instantiate --store dummy:// --eval --strict --json nix/tests/eval.nix \
#     --argstr pkgOut /tmp/x/pkg [--arg settings '{ services.hive-c0re = { ... }; }']
#
# `pkgOut` is the package's out path (the harness fills it by running the
# package's postInstall). `settings` is one more NixOS module.
{ pkgOut
, settings ? { services.hive-c0re.enable = true; }
, module ? ../../NixOS-module.nix
}:
let
  lib = import ./stub-nixpkgs/lib.nix;
  pkgs = import ./stub-nixpkgs/pkgs.nix { outPath = pkgOut; };
  evaluated = lib.evalModules {
    modules = [ ./nixos-options.nix module settings ];
    specialArgs = { inherit pkgs; };
  };
  c = evaluated.config;
  failed = map (a: a.message) (builtins.filter (a: !a.assertion) c.assertions);
  package = c.services.hive-c0re.package;
in
if failed != [ ] then throw "Failed assertions:\n- ${builtins.concatStringsSep "\n- " failed}"
else {
  inherit (c) systemd users security boot warnings;
  environment = {
    inherit (c.environment) systemPackages;
    etc = builtins.mapAttrs (_: e: { inherit (e) text source mode; }) c.environment.etc;
  };
  units = import ./render-units.nix { config = c; };
  package = {
    inherit (package) pname version;
    inherit (package.buildAttrs) postInstall cargoTestFlags;
    meta = { inherit (package.meta) mainProgram; };
  };
}
