# Sourced by nix/tests/run to execute nix/package.nix's postInstall outside
# Nix. Stand-ins for the nixpkgs setup hooks it calls, with the behaviour the
# script relies on (install locations as nixpkgs' installShellFiles uses
# them; --replace-fail failing when the text is absent), plus a fake hivectl
# speaking the assumed CLI:
#   hivectl completions <bash|zsh|fish>   prints a completion script
#   hivectl man --out DIR                 writes man pages into DIR
# The real hooks run only in a real nixpkgs build (not possible here).

substituteInPlace() {
  local file=$1; shift
  local text; text=$(cat "$file"; printf x); text=${text%x}
  while [ $# -gt 0 ]; do
    case $1 in
      --replace-fail)
        [ $# -ge 3 ] || { echo "substituteInPlace: --replace-fail needs two arguments" >&2; return 1; }
        if [[ $text != *"$2"* ]]; then
          echo "substituteInPlace: pattern '$2' not found in $file" >&2; return 1
        fi
        text=${text//"$2"/"$3"}; shift 3 ;;
      *) echo "substituteInPlace: unsupported argument $1 (the stand-in knows --replace-fail)" >&2; return 1 ;;
    esac
  done
  printf '%s' "$text" > "$file"
}

installShellCompletion() {
  local cmd="" shell src dest
  while [ $# -gt 0 ]; do
    case $1 in
      --cmd) cmd=$2; shift 2 ;;
      --bash|--zsh|--fish)
        shell=${1#--}; src=$2; shift 2
        [ -n "$cmd" ] || { echo "installShellCompletion: --$shell needs --cmd NAME first" >&2; return 1; }
        case $shell in
          bash) dest=$out/share/bash-completion/completions/$cmd.bash ;;
          zsh) dest=$out/share/zsh/site-functions/_$cmd ;;
          fish) dest=$out/share/fish/vendor_completions.d/$cmd.fish ;;
        esac
        mkdir -p "$(dirname "$dest")"
        cat "$src" > "$dest"
        [ -s "$dest" ] || { echo "installShellCompletion: $shell completion for $cmd is empty" >&2; return 1; } ;;
      *) echo "installShellCompletion: unsupported argument $1" >&2; return 1 ;;
    esac
  done
}

installManPage() {
  local page section root=${!outputMan:?installManPage: outputMan is not set}
  [ $# -gt 0 ] || { echo "installManPage: no pages given" >&2; return 1; }
  for page in "$@"; do
    section=${page%.gz}; section=${section##*.}
    [[ $section =~ ^[1-9] ]] || { echo "installManPage: $page has no section suffix" >&2; return 1; }
    install -Dm644 "$page" "$root/share/man/man${section:0:1}/$(basename "$page")"
  done
}

# moveToOutput PATTERN DST (stdenv's multiple-outputs.sh): move PATTERN
# (relative to each output) from every other output into DST, merging.
moveToOutput() {
  local pattern=$1 dst=$2 o srcPath
  for o in $outputs; do
    [ "${!o}" = "$dst" ] && continue
    for srcPath in "${!o}"/$pattern; do
      [ -e "$srcPath" ] || [ -L "$srcPath" ] || continue
      mkdir -p "$(dirname "$dst/${srcPath#"${!o}"/}")"
      cp -a "$srcPath" "$(dirname "$dst/${srcPath#"${!o}"/}")/" && rm -rf "$srcPath"
    done
  done
}

# fake_binaries OUT: $OUT/bin/hive-c0re and hive-agent (do nothing) and
# $OUT/bin/hivectl (the assumed completions/man subcommands; anything else is
# a usage error), as cargo install leaves them, all in out.
fake_binaries() {
  mkdir -p "$1/bin"
  printf '#!/bin/sh\nexit 0\n' > "$1/bin/hive-c0re"
  printf '#!/bin/sh\nexit 0\n' > "$1/bin/hive-agent"
  cat > "$1/bin/hivectl" <<'HIVECTL'
#!/bin/sh
case "$1 $2" in
  "completions bash"|"completions zsh"|"completions fish") echo "# hivectl $2 completion (fake)"; exit 0 ;;
esac
if [ "$1" = man ] && [ "$2" = --out ] && [ -d "$3" ]; then
  printf '.TH HIVECTL 1\n' > "$3/hivectl.1"
  printf '.TH HIVECTL-SPAWN 1\n' > "$3/hivectl-spawn.1"
  exit 0
fi
echo "fake hivectl: unexpected arguments: $*" >&2
exit 2
HIVECTL
  chmod +x "$1/bin/hive-c0re" "$1/bin/hive-agent" "$1/bin/hivectl"
}
