# A fake nixpkgs package set with just what nix/package.nix, the NixOS
# modules, flake.nix and nix/tests/vm.nix ask for. Nothing here builds.
#
# `rustPlatform.buildRustPackage` returns a derivation-shaped value and keeps
# the attributes it was given in `buildAttrs`, so the harness can run the
# package's own postInstall script. With `outPath` set, that is the package's
# out path (a scratch directory the harness fills; the `client` output is
# `<outPath>-client`); without it, a real but never-buildable `derivation`,
# so `nix flake check --no-build` can compute a drvPath.
#
# Writers (writeText, writeShellScript, formats.json's generate) return the
# file's would-be store path under `storeDir`, named after a hash of the
# content. With `traceWrites`, forcing such a path prints
#   trace: hive-c0re-stub-write {"path":...,"text":...,"executable":...}
# on stderr, and the harness writes the file there: that is how scripts and
# config files the module generates become real files that systemd-analyze
# can check and the tests can run. runCommand's record carries its
# `command`, which the harness runs with $out set to the path.
#
# Other packages (nix, git, claude-code, coreutils, ...) are directories
# `<storeDir>/<name>` with no content unless the harness makes some.
{ system ? "x86_64-linux"
, outPath ? null
, storeDir ? "/nix/store"
, traceWrites ? false
, overlays ? [ ]
}:
let
  lib = import ./lib.nix;
  b = builtins;
  unbuildable = name: derivation {
    inherit name system;
    builder = "/bin/sh";
    args = [ "-c" "echo this stub package cannot be built >&2; exit 1" ];
  };
  # A package that is just a path (for PATH entries and getExe).
  fakePackage = name: {
    type = "derivation";
    inherit name;
    pname = name;
    version = "0";
    outPath = "${storeDir}/${name}";
    meta.mainProgram = name;
  };

  write = { name, text ? "", executable ? false, command ? null }:
    let
      path = "${storeDir}/${b.substring 0 32 (b.hashString "sha256" "${name}\n${text}\n${toString command}")}-${name}";
      record = b.toJSON { inherit path text executable command; };
    in
    {
      type = "derivation";
      inherit name text executable command;
      outPath = if traceWrites then b.trace "hive-c0re-stub-write ${record}" path else path;
    };

  # nixpkgs' formats.json type: any JSON value, attrsets merged by key.
  jsonValue = with lib.types; nullOr (oneOf [ bool int float str path (attrsOf jsonValue) (listOf jsonValue) ])
    // { name = "JSON value"; };

  callPackage = fn: args:
    let f = if b.isPath fn then import fn else fn;
    in f (b.intersectAttrs (b.functionArgs f) pkgs // args);

  base = {
    inherit lib callPackage;
    extend = overlay: import ./pkgs.nix {
      inherit system outPath storeDir traceWrites;
      overlays = overlays ++ [ overlay ];
    };
    # nixos/lib/eval-config.nix lives under here (a stub of its own).
    path = ./.;
    stdenv = {
      hostPlatform = { inherit system; };
      buildPlatform = { inherit system; canExecute = _: true; };
    };
    installShellFiles = unbuildable "installShellFiles";
    nix = unbuildable "nix" // { meta.mainProgram = "nix"; };
    coreutils = fakePackage "coreutils";
    git = fakePackage "git";
    curl = fakePackage "curl"; # nix/tests/vm.nix
    ripgrep = fakePackage "ripgrep";
    # used by the README's example configuration
    python3 = fakePackage "python3";
    cargo = fakePackage "cargo";
    rustc = fakePackage "rustc";
    claude-code = fakePackage "claude-code" // { meta.mainProgram = "claude"; };
    writeText = name: text: write { inherit name text; };
    runCommand = name: _env: command: write { inherit name command; };
    writeShellScript = name: text: write {
      inherit name;
      executable = true;
      text = "#!${storeDir}/bash/bin/bash\n${text}";
    };
    writeShellScriptBin = name: text: fakePackage name // {
      script = write { inherit name text; executable = true; };
    };
    formats.json = {}: {
      type = jsonValue;
      generate = name: value: write { inherit name; text = b.toJSON value; };
    };
    # nixpkgs' runNixOSTest evaluates the test's nodes and builds a driver;
    # here the nodes are evaluated with the stub eval-config and returned
    # with the test script.
    testers.runNixOSTest = test:
      let
        t = if b.isPath test then import test else test;
        called = if b.isFunction t then t { inherit lib pkgs; } else t;
        evalNode = name: module: (import ./nixos/lib/eval-config.nix {
          modules = [ module { nixpkgs.pkgs = pkgs; networking.hostName = lib.mkDefault name; } ]
            ++ (if called ? defaults then [ called.defaults ] else [ ]);
          inherit pkgs;
        }).config;
      in
      unbuildable "vm-test-run-${called.name}" // {
        inherit (called) name testScript;
        nodes = b.mapAttrs evalNode called.nodes;
      };
    rustPlatform.buildRustPackage = attrs:
      let
        name = "${attrs.pname}-${attrs.version}";
        drv = if outPath == null then unbuildable name else { type = "derivation"; inherit name outPath; };
        client =
          if outPath == null then unbuildable "${name}-client"
          else { type = "derivation"; name = "${name}-client"; outPath = "${outPath}-client"; };
      in
      drv // {
        inherit (attrs) pname version;
        meta = attrs.meta or { };
        buildAttrs = attrs;
      } // (if b.elem "client" (attrs.outputs or [ ]) then { inherit client; } else { });
  };
  # Overlays as nixpkgs applies them: each sees the final set and the one before.
  pkgs = b.foldl' (prev: overlay: prev // overlay pkgs prev) base overlays;
in
pkgs
