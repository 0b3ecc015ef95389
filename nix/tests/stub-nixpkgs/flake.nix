# Offline stand-in for nixpkgs, for
#   nix flake check --no-build --override-input nixpkgs path:nix/tests/stub-nixpkgs
# It exposes the stub lib and a fake package set per system; nothing builds.
{
  description = "hive-c0re test stand-in for nixpkgs (stub lib, fake packages)";
  outputs = { self }: {
    lib = import ./lib.nix;
    legacyPackages = builtins.listToAttrs (map
      (system: { name = system; value = import ./pkgs.nix { inherit system; }; })
      [ "x86_64-linux" "aarch64-linux" ]);
  };
}
