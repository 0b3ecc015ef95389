# shellcheck shell=bash
# The harness's templates in the test-bed: a host-/usr template under /var/lib/machines/NAME in
# the bed with the harness installed by the project's own recipe step
# (systemd/image/install-agent: the shipped hive-agent.service, enabled). The binary is not
# copied: the daemon's default (bind_host_usr) binds the bed's /usr into each agent container,
# and the bed's /usr/local/bin carries the built hive-agent. Kept for the tests that boot many
# containers: one boots in about a second, where a clone of the real agent image
# (systemd/image/build, tested in tests/agent_image.sh) is copied and chowned first.
# Sourced by tests/system/hive-shell, tests/system/tests/harness.sh and agent_image.sh (after
# lib.sh).

# tb_agent_template NAME [CONFIG-FILE]: the template NAME (tb_make_template) with hive-agent
# installed; CONFIG-FILE becomes its /etc/hive-agent/config.json.
tb_agent_template() {
  local name=$1 config=${2:-}
  tb_make_template "$name"
  local args=("/proc/$(tb_leader)/root/var/lib/machines/$name")
  [ -n "$config" ] && args+=(--config "$config")
  "$TB_REPO/systemd/image/install-agent" "${args[@]}"
}

# tb_stand_in_template NAME: tb_agent_template NAME with a stand-in Claude command, read from
# stdin into the template's /etc/hive-agent/stand-in (a short recv wait, a 1 s retry backoff,
# a 5 s stop grace). Done once per bed: an existing template is kept.
tb_stand_in_template() {
  local name=$1 root dir
  root="/proc/$(tb_leader)/root/var/lib/machines/$1"
  if in_c test -e "/var/lib/machines/$name/etc/os-release"; then cat >/dev/null; return 0; fi
  dir=$(mktemp -d)
  cat > "$dir/config.json" <<'JSON'
{"claude_command": ["/etc/hive-agent/stand-in"], "recv_wait_seconds": 5, "retry_backoff_seconds": 1, "stop_grace_seconds": 5}
JSON
  tb_agent_template "$name" "$dir/config.json"
  cat > "$root/etc/hive-agent/stand-in"
  chmod 0755 "$root/etc/hive-agent/stand-in"
  rm -rf "$dir"
}

# The real agent image (systemd/image/build), for tests/agent_image.sh and hive-shell: built on
# the host (the bed has no network) once and cached as a tar file in /var/cache/hive-c0re-tests
# (HIVE_TEST_CACHE), named by a hash of the recipe's files. hive-agent is left out of it
# (`build --no-agent`) and added to the bed's copy by install-agent, so a new binary needs no
# rebuild. The first build takes minutes (debootstrap, apt, npm), later uses seconds.

# tb_image_tar: the cached image tar's path; built when missing (older ones are removed).
tb_image_tar() {
  local cache key tar t
  cache=${HIVE_TEST_CACHE:-/var/cache/hive-c0re-tests}
  key=$(cat "$TB_REPO/systemd/image/build" "$TB_REPO/systemd/image/install-claude" \
    "$TB_REPO/systemd/image/hive-container.preset" | sha256sum | cut -c1-16)
  tar=$cache/agent-image-$key.tar
  if [ ! -s "$tar" ]; then
    mkdir -p "$cache"
    rm -f "$cache"/agent-image-*.tar
    t=$(tb_now)
    "$TB_REPO/systemd/image/build" --no-agent --tar "$tar" >&2 || return 1
    echo "figure: image built in $(( ($(tb_now) - t) / 1000000 )) s: $(du -m "$tar" | cut -f1) MB" >&2
  fi
  echo "$tar"
}

# tb_image_template NAME TAR: the bed's /var/lib/machines/NAME unpacked from TAR, with
# hive-agent (the bed's copy of the built binary), its unit and its user added by install-agent.
# Once per bed: an existing one is kept.
tb_image_template() {
  local root t
  root="/proc/$(tb_leader)/root/var/lib/machines/$1"
  in_c test -e "/var/lib/machines/$1/usr/local/bin/hive-agent" && return 0
  t=$(tb_now)
  tb_image_copy "$root" "$2"
  echo "figure: image unpacked into the bed in $(( ($(tb_now) - t) / 1000 )) ms" >&2
}

# tb_image_copy ROOT TAR: TAR unpacked into ROOT (a path on the host), hive-agent added by
# install-agent.
tb_image_copy() {
  mkdir -p "$1"
  tar -C "$1" --numeric-owner -xf "$2"
  "$TB_REPO/systemd/image/install-agent" "$1" --binary "$TB_DIR/bin/hive-agent"
}

# tb_shared_image NAME TAR STORE: the shared image in the bed (issue 48): TAR's copy as
# tb_image_copy makes it, split by systemd/image/share into the small template
# /var/lib/machines/NAME and the version STORE/v1 (STORE/current). Once per bed.
tb_shared_image() {
  local root store t
  root="/proc/$(tb_leader)/root/var/lib/machines/$1"
  store="/proc/$(tb_leader)/root$3"
  in_c test -e "$3/current" && return 0
  t=$(tb_now)
  tb_image_copy "$root" "$2"
  "$TB_REPO/systemd/image/share" "$root" --images "$store" --version v1
  echo "figure: shared image made in the bed in $(( ($(tb_now) - t) / 1000 )) ms" >&2
}
