# shellcheck shell=bash
# Issue 44, kernel objects per agent: each agent's container unit carries a TasksMax= (the
# hive's agent_tasks_max, 4096 by default) beside CPUQuota= and MemoryMax=, and the agent's
# shell (isolation.sh's probe, as Claude's Bash tool runs) cannot start more tasks than that.
# Where the bed's cgroup tree has no pids controller the limit cannot be enforced here: the
# test then says so and checks the configuration only.

# shellcheck disable=SC2016  # the probe's $ are the agent's
every_agent_unit_has_the_hives_tasks_max_and_an_agent_cannot_start_more_tasks() {
  _iso_hive tmx
  local unit=systemd-nspawn@h-tmx.service cg out
  expect_eq "TasksMax of $unit" 4096 "$(unit_prop "$unit" TasksMax)"
  expect_eq "MemoryMax of $unit" 4294967296 "$(unit_prop "$unit" MemoryMax)"
  cg=$(unit_prop "$unit" ControlGroup)
  if ! in_c grep -qw pids "/sys/fs/cgroup$cg/cgroup.controllers" 2>/dev/null; then
    echo "figure: TasksMax only configured: the bed's cgroup tree has no pids controller for $unit"
    return 0
  fi
  # 5,000 threads from the agent's shell: past 4,096 tasks in the whole container, new ones fail.
  out=$(_iso_probe tmx '
python3 - <<PY
import threading, time
ev = threading.Event(); n = 0
try:
    for _ in range(5000):
        t = threading.Thread(target=ev.wait); t.start(); n += 1
except RuntimeError as e:
    print("refused after", n, "threads:", e)
else:
    print("started", n, "threads")
ev.set()
PY')
  echo "$out" | sed 's/^/  /'
  expect_match "5,000 threads in tmx" '^refused after [0-9]+ threads' "$(grep -E '^(refused|started) ' <<<"$out")"
  local n
  n=$(sed -n 's/^refused after \([0-9]*\) threads.*/\1/p' <<<"$out")
  [ "$n" -lt 4096 ] || { echo "  expected fewer than 4096 threads, saw $n"; return 1; }
  echo "figure: tmx started $n threads before TasksMax=4096 refused the next"
}
