# Stand-in for nixpkgs' nixos/lib/eval-config.nix: evaluates a NixOS
# configuration with the stub lib and the option declarations in
# ../options.nix. Its pkgs are the configuration's `nixpkgs.pkgs` (the
# callers here always set it, as nixos-containers and the hive's agents do).
# Returns { config, options } like the real one; config.system.build.toplevel
# is a JSON description of the system, not a bootable system.
{ modules
, system ? null
, specialArgs ? { }
, prefix ? [ ]
, pkgs ? null
}:
let
  lib = import ../../lib.nix;
  evaluated = lib.evalModules {
    inherit prefix;
    modules = [ ../options.nix ] ++ modules;
    specialArgs = specialArgs // {
      pkgs = if pkgs != null then pkgs else evaluated.config.nixpkgs.pkgs;
      modulesPath = ../modules;
    };
  };
  failed = map (a: a.message) (builtins.filter (a: !a.assertion) evaluated.config.assertions);
in
if failed != [ ] then throw "Failed assertions:\n- ${builtins.concatStringsSep "\n- " failed}"
else evaluated // { inherit system; }
