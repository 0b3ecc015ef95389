{
  description = "hive-c0re: host daemon of a hive of AI coding agents in systemd-nspawn containers";

  # flake.lock pins nixos-unstable at one revision; nix/README.md says how the
  # lock was made (by hand, from a revision and hash published elsewhere:
  # GitHub is out of reach where this project is developed).
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs = { self, nixpkgs }:
    let
      systems = [ "x86_64-linux" "aarch64-linux" ];
      forAllSystems = nixpkgs.lib.genAttrs systems;
      pkgsFor = system: nixpkgs.legacyPackages.${system}.extend self.overlays.default;
    in
    {
      packages = forAllSystems (system: rec {
        default = (pkgsFor system).hive-c0re;
        # hivectl alone (with its man pages and completions)
        hivectl = default.client;
      });

      overlays.default = import ./nix/overlay.nix;

      nixosModules = {
        # The host module, plus the overlay that gives it pkgs.hive-c0re.
        default = {
          imports = [ self.nixosModules.hive-c0re ];
          nixpkgs.overlays = [ self.overlays.default ];
        };
        # The module alone, for systems whose pkgs are fixed (nixpkgs.pkgs,
        # readOnlyPkgs): add overlays.default to those pkgs instead.
        hive-c0re = { imports = [ ./NixOS-module.nix ]; };
        # The inside of an agent container (the host module uses it for
        # every agent; here for agent systems built elsewhere).
        agent = { imports = [ ./nix/agent-module.nix ]; };
      };

      # The NixOS VM test; needs KVM: nix build .#checks.x86_64-linux.vm
      checks = forAllSystems (system: {
        vm = (pkgsFor system).testers.runNixOSTest ./nix/tests/vm.nix;
      });
    };
}
