{
  description = "hive-c0re: host daemon of a hive of AI coding agents in systemd-nspawn containers";

  # No flake.lock is committed: a lock for nixpkgs cannot be made where this
  # project is developed (no access to GitHub). `nix flake lock` makes one.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAllSystems = nixpkgs.lib.genAttrs systems;
    in
    {
      packages = forAllSystems (system: {
        default = nixpkgs.legacyPackages.${system}.callPackage ./nix/package.nix { };
      });

      overlays.default = final: _prev: {
        hive-c0re = final.callPackage ./nix/package.nix { };
      };

      # The module builds its default package from the same source with the
      # system's own pkgs; no overlay is needed to use it.
      nixosModules.default = { imports = [ ./NixOS-module.nix ]; };
    };
}
