# nix/tests/checks/flake.sh: the flake and the VM test, as far as they evaluate here.
# Sourced by nix/tests/run, in its order, with its helpers and variables.
# shellcheck shell=bash

# --- 9. the flake ----------------------------------------------------------------------
flake_check() {
  [ "$(id -u)" -eq 0 ] || {
    echo "nix flake check needs a writable /nix/store: run as root"
    return 1
  }
  git ls-files --error-unmatch flake.nix flake.lock NixOS-module.nix nix/settings-options.nix nix/package.nix nix/overlay.nix \
    nix/agent-module.nix nix/tests/vm.nix nix/tests/stub-nixpkgs/flake.nix >/dev/null || {
    echo "flakes see only git-tracked files: git add them first"
    return 1
  }
  nix flake check --no-build --no-write-lock-file --override-input nixpkgs "path:$HERE/stub-nixpkgs" "$ROOT"
}
check "nix flake check --no-build passes (nixpkgs replaced by the stub)" flake_check
flake_outputs() {
  nix flake show --json --no-write-lock-file --override-input nixpkgs "path:$HERE/stub-nixpkgs" "$ROOT" >"$T/show.json" 2>"$T/show.err" ||
    { cat "$T/show.err"; return 1; }
  jqt "$T/show.json" '(.packages["x86_64-linux"].default.name == "hive-c0re-'"$(jq -r .package.version "$T/on.json")"'")
    and (.packages["x86_64-linux"].hivectl.name == "hive-c0re-'"$(jq -r .package.version "$T/on.json")"'-client")
    and (.packages["aarch64-linux"] | has("default"))
    and (.nixosModules | keys == ["agent", "default", "hive-c0re"])
    and (.checks["x86_64-linux"] | has("vm")) and (.overlays | has("default"))'
}
check "the flake exposes packages (default, hivectl), nixosModules (default, hive-c0re, agent), overlays and checks.vm" \
  flake_outputs
lock_pins() {
  jqt flake.lock '.version == 7 and .nodes.root.inputs.nixpkgs == "nixpkgs"
    and (.nodes.nixpkgs.locked | .type == "github" and .owner == "NixOS" and .repo == "nixpkgs"
      and (.rev | test("^[0-9a-f]{40}$")) and (.narHash | test("^sha256-[A-Za-z0-9+/]{43}=$")))
    and .nodes.nixpkgs.original.ref == "nixos-unstable"' &&
    nix flake metadata --json --no-write-lock-file --override-input nixpkgs "path:$HERE/stub-nixpkgs" "$ROOT" >/dev/null
}
check "flake.lock pins nixpkgs to one revision with its NAR hash, and Nix reads it" lock_pins

# --- 10. the VM test, as far as it can be evaluated here -----------------------------
ev_vm() {
  "${NI[@]}" --eval --strict --json -E "
    let
      pkgs = (import $HERE/stub-nixpkgs/pkgs.nix { outPath = \"$PKG\"; storeDir = \"$STORE\"; traceWrites = true; }).extend
        (import $ROOT/nix/overlay.nix);
      test = pkgs.testers.runNixOSTest $HERE/vm.nix;
      m = test.nodes.machine;
    in {
      inherit (test) name testScript;
      units = builtins.attrNames (import $HERE/stub-nixpkgs/nixos/render-units.nix { config = m; });
      users = builtins.mapAttrs (_: u: u.extraGroups) m.users.users;
      agents = builtins.attrNames m.services.hive-c0re.agents;
    }" >"$T/vm.json.part" 2>"$T/vm.json.err" && mv "$T/vm.json.part" "$T/vm.json"
}
ev_vm
check "nix/tests/vm.nix: its node evaluates (units, operators, the declared agent)" \
  jqt "$T/vm.json" '.name == "hive-c0re" and (.units | index("hive-c0re-agents.service") != null)
    and .users.alice == ["hive-admin"] and .users.bob == [] and .agents == ["scout"]'
vm_script_parses() {
  [ -e "$T/vm.json" ] || { grep -v '^trace: ' "$T/vm.json.err"; return 1; }
  jq -r .testScript "$T/vm.json" >"$T/vm-test.py"
  python3 - "$T/vm-test.py" <<'PY'
import ast, sys
tree = ast.parse(open(sys.argv[1]).read())
# only the test driver's Machine methods nixosTest provides
known = {"wait_for_unit", "succeed", "fail", "wait_until_succeeds", "wait_for_file"}
for node in ast.walk(tree):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "machine":
        assert node.func.attr in known, node.func.attr
PY
}
check "nix/tests/vm.nix: the test script is Python using only the test driver's machine methods" vm_script_parses
