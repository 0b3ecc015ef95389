# nix/tests/checks/package.sh: the package: version, postInstall, installed files and units.
# Sourced by nix/tests/run, in its order, with its helpers and variables.
# shellcheck shell=bash

# --- 2. the package -------------------------------------------------------------
ev "$T/on.json"
if [ ! -e "$T/on.json" ]; then
  bad "the module evaluates (enabled, defaults)" "$(grep -v '^trace: ' "$T/on.json.err")"
  finish
fi
ok "the module evaluates (enabled, defaults)"

check "the package's version is Cargo.toml's" \
  jqt "$T/on.json" ".package.version == \"$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)\""

no_git_deps() {
  ! grep -n 'source = "git+' Cargo.lock || {
    echo "nix/package.nix needs cargoLock.outputHashes for these"
    return 1
  }
}
check "Cargo.lock has only registry crates (cargoLock.lockFile needs no hashes)" no_git_deps

# post_install SCRIPT OUT CLIENT [fake]: the package's postInstall as a nixpkgs
# build runs it: bash with errexit (a separate process, so that errexit is not
# switched off by the caller's `&&`), in a copy of the source, with the
# outputs' variables set and cargo's install (every binary in $out/bin) done.
post_install() {
  local script=$1 out=$2 client=$3 fake=${4:-}
  mkdir -p "$T/src" && cp -r systemd "$T/src/" &&
    {
      echo "set -euo pipefail; out='$out'; client='$client'; cd '$T/src'"
      echo "outputs='$(jq -r '.package.outputs | join(" ")' "$T/on.json")'; outputMan=$(jq -r .package.outputMan "$T/on.json")"
      echo ". '$HERE/package-hooks.sh'"
      [ -n "$fake" ] && echo "fake_binaries \"\$out\""
      jq -r .package.postInstall "$T/on.json"
    } >"$script" &&
    bash "$script"
}
check "the package's postInstall runs (nixpkgs hooks stood in for, fake binaries)" \
  post_install "$T/postInstall.sh" "$PKG" "$CLIENT" fake

installed_files() {
  local f missing=0
  for f in lib/systemd/system/hive-c0re.socket lib/systemd/system/hive-c0re-web.socket \
    lib/systemd/system/hive-c0re.service lib/systemd/system/hive-c0re-egress.socket \
    lib/systemd/system/hive-c0re-egress.service lib/sysusers.d/hive-c0re.conf bin/hive-c0re bin/hive-agent; do
    [ -s "$PKG/$f" ] || { echo "missing: \$out/$f"; missing=1; }
  done
  for f in bin/hivectl share/bash-completion/completions/hivectl.bash \
    share/zsh/site-functions/_hivectl share/fish/vendor_completions.d/hivectl.fish \
    share/man/man1/hivectl.1 share/man/man1/hivectl-spawn.1; do
    [ -s "$CLIENT/$f" ] || { echo "missing: \$client/$f"; missing=1; }
  done
  return $missing
}
check "out has the daemon, hive-agent, the units (host.sock's, web.sock's, the service, the egress proxy's socket and service) and sysusers; client has hivectl, completions and man pages" \
  installed_files
split_outputs() {
  [ ! -e "$PKG/bin/hivectl" ] && [ ! -e "$PKG/share" ] && [ "$(ls "$CLIENT/bin")" = hivectl ] || {
    echo "out: $(cd "$PKG" && find . -type f | sort | tr '\n' ' ')"
    echo "client: $(cd "$CLIENT" && find . -type f | sort | tr '\n' ' ')"
    return 1
  }
}
check "hivectl alone is in the client output (installing it pulls no daemon)" split_outputs

units_unchanged() {
  cmp systemd/hive-c0re.socket "$PKG/lib/systemd/system/hive-c0re.socket" &&
    cmp systemd/hive-c0re-web.socket "$PKG/lib/systemd/system/hive-c0re-web.socket" &&
    cmp systemd/hive-c0re.sysusers "$PKG/lib/sysusers.d/hive-c0re.conf" &&
    cmp systemd/hive-c0re-egress.socket "$PKG/lib/systemd/system/hive-c0re-egress.socket" &&
    diff <(sed "s|^ExecStart=/usr/local/bin/hive-c0re |ExecStart=$PKG/bin/hive-c0re |" systemd/hive-c0re.service) \
      "$PKG/lib/systemd/system/hive-c0re.service" &&
    grep -qx "ExecStart=$PKG/bin/hive-c0re serve" "$PKG/lib/systemd/system/hive-c0re.service" &&
    diff <(sed "s|^ExecStart=/usr/local/bin/hive-c0re |ExecStart=$PKG/bin/hive-c0re |" systemd/hive-c0re-egress.service) \
      "$PKG/lib/systemd/system/hive-c0re-egress.service" &&
    grep -qx "ExecStart=$PKG/bin/hive-c0re egress" "$PKG/lib/systemd/system/hive-c0re-egress.service"
}
check "the installed units are systemd/'s, only ExecStart now points into \$out" units_unchanged

# The same postInstall with the real binaries, once hivectl has the assumed
# subcommands (`hivectl completions SHELL`, `hivectl man --out DIR`); until
# then this is reported as a skip, not counted.
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/debug
if [ -x "$BIN/hivectl" ] && "$BIN/hivectl" --help 2>/dev/null | grep -qw completions; then
  real_post_install() {
    mkdir -p "$T/real/out/bin" "$T/real/client" && cp "$BIN/hivectl" "$BIN/hive-c0re" "$T/real/out/bin/" &&
      post_install "$T/postInstall-real.sh" "$T/real/out" "$T/real/client" &&
      [ -s "$T/real/client/share/bash-completion/completions/hivectl.bash" ] &&
      ls "$T/real/client/share/man/man1/hivectl"*.1 >/dev/null
  }
  check "the package's postInstall works with the real hivectl ($BIN/hivectl)" real_post_install
else
  echo "skip - the package's postInstall with the real hivectl: $BIN/hivectl is not built or has no 'completions' subcommand yet"
fi

# verify_quiet DIR UNIT...: systemd-analyze verify exits 0 on unknown keys and
# bad values, so any output at all is a failure.
verify_quiet() {
  local dir=$1 out
  shift
  out=$(cd "$dir" && systemd-analyze verify --man=no "$@" 2>&1) && [ -z "$out" ] || {
    echo "$out"
    return 1
  }
}
check "systemd-analyze verify of the package's units prints nothing" \
  verify_quiet "$PKG/lib/systemd/system" hive-c0re.socket hive-c0re-web.socket hive-c0re.service \
    hive-c0re-egress.socket hive-c0re-egress.service
