# pkgs.hive-c0re from this checkout (the flake's overlays.default). The
# NixOS modules take their default package from pkgs.hive-c0re, as they would
# in nixpkgs.
final: _prev: {
  hive-c0re = final.callPackage ./package.nix { };
}
