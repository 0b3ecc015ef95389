# shellcheck shell=bash
# Issue 48: one shared read-only agent image, a small root per agent. The built image
# (tb_image_tar) is split in the bed by systemd/image/share into the template hive-shared
# (/etc, /var, an empty usr/) and the store's version v1 (its /usr); the hive's config names the
# store. Attacked from where the attacker sits: the agent's user and its container's root.
# Figures: what a new agent adds to the machine store (du) and how long its spawn takes.

# shellcheck source=../agent_image.sh
source "$HERE/agent_image.sh"

TB_SH_STORE=/var/lib/tb-hive-images

# _sh_hive TEMPLATE [MEMBERS]: the hive with TEMPLATE and the bed's shared image store.
_sh_hive() {
  tb_hive "{\"stop_deadline_secs\": 2, \"template_image\": \"$1\", \"bind_host_usr\": false,
    \"agent_images_dir\": \"$TB_SH_STORE\"${2:+, $2}}"
}
# _sh_as NAME USER SCRIPT: SCRIPT run by bash in h-NAME as USER (a transient service of its own
# systemd; '$' doubled for systemd's expansion of the command line).
_sh_as() {
  in_c systemd-run -M "h-$1" --wait --pipe --quiet -p User="$2" /bin/bash -c "${3//\$/\$\$}" 2>&1
}
_sh_spawn_ms() {
  local t out
  t=$(tb_now)
  out=$(hivectl_root spawn "$1" 2>&1) || { echo "hivectl spawn $1 failed: $out" >&2; return 1; }
  tb_wait_machine 120 "h-$1" >&2 || return 1
  echo $(( ($(tb_now) - t) / 1000 ))
}
_sh_du_mb() { in_c du -sm "/var/lib/machines/$1" | cut -f1; }
_sh_usr_line() { in_c grep -F ':/usr' "/etc/systemd/nspawn/h-$1.nspawn" || true; }
_sh_needs_update() {
  [ "$(hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
print([r for r in json.load(sys.stdin)["agent_statuses"] if r["name"] == sys.argv[1]][0]["needs_update"])' "$1")" = "$2" ]
}
_sh_needs_login() {
  [ "$(hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
print([r for r in json.load(sys.stdin)["agent_statuses"] if r["name"] == sys.argv[1]][0]["needs_login"])' "$1")" = "$2" ]
}

# shellcheck disable=SC2016  # the probes' $ are the agent's
an_agent_of_the_shared_image_is_small_and_cannot_write_or_remount_its_usr() {
  local tar ms out leader
  tar=$(tb_image_tar)
  tb_shared_image hive-shared "$tar" "$TB_SH_STORE" 2>&1
  tb_agents sha
  _sh_hive hive-shared
  ms=$(_sh_spawn_ms sha)
  echo "figure: spawn of a shared-image agent to multi-user.target: $ms ms;" \
    "its own root: $(_sh_du_mb h-sha) MB (the template $(_sh_du_mb hive-shared) MB," \
    "the shared /usr $(in_c du -sm "$TB_SH_STORE/v1/usr" | cut -f1) MB)"
  expect_eq "h-sha.nspawn's /usr" "BindReadOnly=$TB_SH_STORE/v1/usr:/usr" "$(_sh_usr_line sha)"
  (( $(_sh_du_mb h-sha) <= 20 )) || { echo "  h-sha's root is $(_sh_du_mb h-sha) MB"; return 1; }

  # As the harness's user: the image's node and claude run; /usr is nobody's and read-only,
  # also after a remount in a user and mount namespace of its own.
  out=$(_sh_as sha agent 'id -un
node -e "console.log(process.version)"
claude --version
stat -c "%u %g" /usr/bin/node /usr/local/bin/hive-agent
touch /usr/tb-agent-was-here 2>/dev/null && echo "usr WRITTEN" || echo "usr refused"
unshare -rm sh -c "mount -o remount,bind,rw /usr && touch /usr/tb-agent-was-here" >/dev/null 2>&1 &&
  echo "usr-remounted WRITTEN" || echo "usr-remounted refused"')
  echo "$out" | sed 's/^/  /'
  expect_eq "the agent's view" "agent
$(sed -n 2p <<<"$out")
2.1.112 (Claude Code)
65534 65534
65534 65534
usr refused
usr-remounted refused" "$out"
  # As the container's root (all its capabilities, in its user namespace): no write, no
  # remount (the read-only flag was set outside and is locked), no chmod of a setuid program.
  out=$(_sh_as sha root 'touch /usr/tb-root-was-here 2>/dev/null && echo "usr WRITTEN" || echo "usr refused"
mount -o remount,bind,rw /usr 2>/dev/null && echo "remount DONE" || echo "remount refused"
unshare -m sh -c "mount -o remount,bind,rw /usr && touch /usr/tb-root-was-here" 2>/dev/null &&
  echo "usr-remounted WRITTEN" || echo "usr-remounted refused"
chmod u+s /usr/bin/env 2>/dev/null && echo "chmod DONE" || echo "chmod refused"')
  echo "$out" | sed 's/^/  /'
  expect_eq "the container's root on /usr" "usr refused
remount refused
usr-remounted refused
chmod refused" "$out"
  leader=$(in_c machinectl show -p Leader --value h-sha)
  if in_c nsenter -t "$leader" -a -- unshare -m sh -c \
      'mount -o remount,bind,rw /usr && touch /usr/tb-root-was-here' 2>/dev/null; then
    echo "  the container's init remounted /usr writable and wrote to it"; return 1
  fi
  expect_eq "files of the agent's in the shared /usr" "" \
    "$(in_c ls "$TB_SH_STORE/v1/usr" | grep tb- || true)"
  # The harness runs from the shared /usr: it reported the login state (no credentials).
  tb_wait_machine 60 h-sha hive-agent.service ||
    { in_c journalctl -M h-sha -u hive-agent --no-pager -n 30; return 1; }
  wait_for 30 "sha's login state on the roster" _sh_needs_login sha True
}

# An upgrade and an image update: a full-copy agent (the image before issue 48) keeps running
# when the image is shared; its rebuild moves it onto the shared /usr with its login (its state directory; its inbox is in the hive's store);
# a new version moves nobody until a rebuild, and the old version stays.
# shellcheck disable=SC2016
a_rebuild_moves_an_agent_to_the_current_shared_version_and_keeps_its_login() {
  local tar root store
  tar=$(tb_image_tar)
  tb_image_template hive-image "$tar" 2>&1
  tb_shared_image hive-shared "$tar" "$TB_SH_STORE" 2>&1
  tb_agents shfull
  # Before: the full image, no store.
  tb_hive '{"stop_deadline_secs": 2, "template_image": "hive-image", "bind_host_usr": false,
    "agent_images_dir": "/var/lib/tb-no-images"}'
  _sh_spawn_ms shfull >/dev/null
  expect_eq "the full-copy agent's /usr line" "" "$(_sh_usr_line shfull)"
  _sh_as shfull agent 'mkdir -p /var/lib/hive/claude && echo "{\"claudeAiOauth\": {}}" > /var/lib/hive/claude/.credentials.json' >/dev/null
  in_c systemctl stop "$TB_UNIT"
  _sh_hive hive-shared
  expect_eq "the full-copy agent's /usr line after the switch, before a rebuild" "" "$(_sh_usr_line shfull)"
  # The roster says a rebuild would move it (the daemon checked at its start).
  wait_for 15 "shfull needs an update (a full copy, the shared image there)" _sh_needs_update shfull True
  hivectl_root rebuild shfull
  expect_eq "its /usr line after its rebuild" "BindReadOnly=$TB_SH_STORE/v1/usr:/usr" "$(_sh_usr_line shfull)"
  wait_for 15 "shfull is up to date after its rebuild" _sh_needs_update shfull False
  tb_wait_machine 120 h-shfull hive-agent.service ||
    { in_c journalctl -M h-shfull -u hive-agent --no-pager -n 30; return 1; }
  expect_eq "its /usr's owner inside (the shared one, not its own copy)" "65534" \
    "$(_sh_as shfull agent 'stat -c %u /usr/bin/node')"
  wait_for 45 "shfull's login state (logged in)" _sh_needs_login shfull False

  # A new version (hard links of v1's files: a copy as far as the store knows).
  root="/proc/$(tb_leader)/root/var/tmp/tb-v2" store="/proc/$(tb_leader)/root$TB_SH_STORE"
  mkdir -p "$root/usr" && cp -al "$store/v1/usr/." "$root/usr/"
  "$TB_REPO/systemd/image/share" "$root" --images "$store" --version v2 2>&1
  rm -rf "$root"
  expect_eq "its /usr line once v2 is current, before a rebuild" \
    "BindReadOnly=$TB_SH_STORE/v1/usr:/usr" "$(_sh_usr_line shfull)"
  # Seen at the daemon's next start: the roster flags it, the log says which versions.
  in_c systemctl restart "$TB_UNIT"
  wait_for 15 "shfull needs an update once v2 is current" _sh_needs_update shfull True
  expect_match "the daemon's words" "the shared agent image v2 is newer than its v1" \
    "$(in_c journalctl -u "$TB_UNIT" --no-pager -o cat | grep 'shfull: needs an update:' | tail -n 1)"
  hivectl_root rebuild shfull
  expect_eq "its /usr line after the rebuild" "BindReadOnly=$TB_SH_STORE/v2/usr:/usr" "$(_sh_usr_line shfull)"
  wait_for 15 "shfull is up to date after the rebuild" _sh_needs_update shfull False
  tb_wait_machine 120 h-shfull hive-agent.service
  expect_eq "v1 is still in the store" "yes" "$(in_c test -x "$TB_SH_STORE/v1/usr/bin/env" && echo yes)"
  in_c ln -sfn v1 "$TB_SH_STORE/current"
}

# _sh_share VERSION: a new version in the bed's store (hard links of v1's files: a copy as far
# as the store knows), made current by systemd/image/share.
_sh_share() {
  local root store
  root="/proc/$(tb_leader)/root/var/tmp/tb-$1" store="/proc/$(tb_leader)/root$TB_SH_STORE"
  rm -rf "$root" && mkdir -p "$root/usr" && cp -al "$store/v1/usr/." "$root/usr/"
  "$TB_REPO/systemd/image/share" "$root" --images "$store" --version "$1" 2>&1
  rm -rf "$root"
}
# _sh_image_agents VERSION: the agents `hivectl image ls --json` lists for VERSION, and
# "current" when it is the current one.
_sh_image_agents() {
  hivectl_root --json image ls | "$TB_PYTHON" -c 'import json, sys
rows = [r for r in json.load(sys.stdin)["images"] if r.get("version") == sys.argv[1]]
print(" ".join(rows[0]["agents"] + (["current"] if rows[0].get("current") else [])) if rows else "absent")' "$1"
}

# hivectl image ls / prune: an agent on version pa, then pb shared: `image ls` shows pa used by
# it and pb current; prune keeps both (pa is used, pb the newest); after its rebuild moves it to
# pb, prune removes pa and only pa (v1 and v2, the other tests', are named by a .nspawn file the
# hive did not write, which keeps them). The bed's store is not the shipped unit's default: a
# drop-in makes it writable, as the docs tell an operator to.
image_ls_shows_the_agents_of_each_version_and_prune_removes_only_an_unused_older_one() {
  local dropin=/run/systemd/system/hive-c0re.service.d out
  tb_shared_image hive-shared "$(tb_image_tar)" "$TB_SH_STORE" 2>&1
  in_c rm -rf "$TB_SH_STORE/pa" "$TB_SH_STORE/pb"
  tb_agents shp
  in_c mkdir -p "$dropin" /etc/systemd/nspawn
  printf '[Service]\nReadWritePaths=%s\n' "$TB_SH_STORE" | in_c sh -c "cat > $dropin/tb-store.conf"
  printf '[Files]\nBindReadOnly=%s/v1/usr:/usr\n# %s/v2\n' "$TB_SH_STORE" "$TB_SH_STORE" |
    in_c sh -c 'cat > /etc/systemd/nspawn/tb-keep.nspawn'
  trap 'in_c rm -rf /run/systemd/system/hive-c0re.service.d /etc/systemd/nspawn/tb-keep.nspawn
    in_c systemctl daemon-reload; tb_forget_agents
    in_c ln -sfn v1 "$TB_SH_STORE/current"; in_c rm -rf "$TB_SH_STORE/pa" "$TB_SH_STORE/pb"' EXIT
  in_c systemctl daemon-reload
  _sh_share pa
  _sh_hive hive-shared
  _sh_spawn_ms shp >/dev/null
  expect_eq "shp's /usr line" "BindReadOnly=$TB_SH_STORE/pa/usr:/usr" "$(_sh_usr_line shp)"
  _sh_share pb
  expect_eq "the agents of pa" "shp" "$(_sh_image_agents pa)"
  expect_eq "the agents of pb" "current" "$(_sh_image_agents pb)"
  out=$(hivectl_root image ls)
  echo "$out" | sed 's/^/  /'
  expect_eq "prune --dry-run with pa in use and pb the newest" \
    "no unused image versions: nothing to remove" "$(hivectl_root image prune --dry-run)"
  expect_eq "prune with pa in use and pb the newest" \
    "no unused image versions: nothing removed" "$(hivectl_root image prune)"
  expect_eq "pa and pb are in the store" "yes yes" \
    "$(in_c sh -c "test -x $TB_SH_STORE/pa/usr/bin/env && echo yes; test -x $TB_SH_STORE/pb/usr/bin/env && echo yes" | paste -sd' ')"
  hivectl_root rebuild shp
  expect_eq "shp's /usr line after its rebuild" "BindReadOnly=$TB_SH_STORE/pb/usr:/usr" "$(_sh_usr_line shp)"
  expect_eq "the agents of pb after the rebuild" "shp current" "$(_sh_image_agents pb)"
  expect_eq "prune --dry-run once pa is unused" "would remove pa" "$(hivectl_root image prune --dry-run)"
  expect_eq "prune once pa is unused" "removed pa" "$(hivectl_root image prune)"
  expect_eq "pa after the prune" "absent" "$(_sh_image_agents pa)"
  expect_eq "pa is gone, pb and v1 (named by tb-keep.nspawn) are kept" "no yes yes" \
    "$(for v in pa pb v1; do in_c test -d "$TB_SH_STORE/$v" && echo yes || echo no; done | paste -sd' ')"
  tb_wait_machine 120 h-shp hive-agent.service ||
    { in_c journalctl -M h-shp -u hive-agent --no-pager -n 30; return 1; }
}
