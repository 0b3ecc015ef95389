# A fake nixpkgs package set with just what nix/package.nix, NixOS-module.nix
# and flake.nix ask for. Nothing here builds.
#
# `rustPlatform.buildRustPackage` returns a derivation-shaped value and keeps
# the attributes it was given in `buildAttrs`, so the harness can run the
# package's own postInstall script. With `outPath` set, that is the package's
# out path (a scratch directory the harness fills); without it, a real but
# never-buildable `derivation`, so `nix flake check --no-build` can compute a
# drvPath.
{ system ? "x86_64-linux", outPath ? null }:
let
  lib = import ./lib.nix;
  unbuildable = name: derivation {
    inherit name system;
    builder = "/bin/sh";
    args = [ "-c" "echo this stub package cannot be built >&2; exit 1" ];
  };
  callPackage = fn: args:
    let f = if builtins.isPath fn then import fn else fn;
    in f (builtins.intersectAttrs (builtins.functionArgs f) pkgs // args);
  pkgs = {
    inherit lib callPackage;
    stdenv = {
      hostPlatform = { inherit system; };
      buildPlatform = { inherit system; canExecute = _: true; };
    };
    installShellFiles = unbuildable "installShellFiles";
    nix = unbuildable "nix" // { meta.mainProgram = "nix"; };
    rustPlatform.buildRustPackage = attrs:
      let
        name = "${attrs.pname}-${attrs.version}";
        drv = if outPath == null then unbuildable name else { type = "derivation"; inherit name outPath; };
      in
      drv // {
        inherit (attrs) pname version;
        meta = attrs.meta or { };
        buildAttrs = attrs;
      };
  };
in
pkgs
