# services.hive-c0re.settings: the option of every key of the daemon's
# config file (src/config/mod.rs, `Config`), with the daemon's own defaults
# except where NixOS needs another (profile, the build command).
# nix/tests/run compares these names with the struct. Imported by
# NixOS-module.nix, which passes the helpers and values the declarations use.
{ lib, s, opt, absolutePath, unitStateDir, runtimeDir, buildCommand }:
let
  inherit (lib) mkOption types;
in
{
  state_dir = opt absolutePath unitStateDir ''
    Where the daemon keeps its SQLite database and the agents' state. A
    directory other than ${unitStateDir} is created and made writable.
  '';
  runtime_dir = opt absolutePath runtimeDir ''
    Where the sockets live. Fixed by hive-c0re.socket (`ListenStream=`):
    only ${runtimeDir} is accepted.
  '';
  driver = opt (types.enum [ "systemd" "fake" ]) "systemd" ''
    Container driver: `systemd` (machined and systemd over D-Bus) or `fake`
    (in memory; for trying hivectl without containers).
  '';
  profile = opt (types.enum [ "nixos" "nspawn" ]) "nixos" ''
    How agent containers are made. `nixos`: NixOS containers
    (`container@h-<agent>.service`, configs in `nixos_containers_dir`,
    systems from `nixos_build_command`). `nspawn`: systemd-nspawn machines
    cloned from `template_image` (`systemd-nspawn@h-<agent>.service`,
    settings in `nspawn_dir`).
  '';
  domain = opt (types.nullOr types.str) null "The hive's public domain; enables the agents' URLs in `hivectl` output.";
  forge_url = opt (types.nullOr types.str) null "Browser URL of the hive's forge, if it has one.";
  matrix_url = opt (types.nullOr types.str) null "Browser URL of the hive's Matrix client, if it has one.";
  stop_deadline_secs = opt types.ints.unsigned 30 "How long a graceful stop waits before SIGKILL, in seconds.";
  template_image = opt types.str "hive-template" ''
    machined image that `spawn` clones (nspawn profile). It must exist in
    /var/lib/machines; this module does not build it.
  '';
  bind_host_usr = opt types.bool true ''
    nspawn profile: bind the host's `/usr` read-only into each agent
    container created from now on (a template with an empty `usr/`).
    `false` for a self-contained agent image (`systemd/image/build`),
    whose own `/usr` then runs. An agent keeps the choice it was created
    with across restarts and rebuilds.
  '';
  agent_images_dir = opt absolutePath "/var/lib/hive-images" ''
    nspawn profile: the shared agent image's store (`systemd/image/share`).
    When its `current` names a version, agents created or rebuilt from now
    on bind that version's `usr` read-only and clone `template_image` as
    their small root (an agent of the host's `/usr` keeps it).
  '';
  nspawn_dir = opt absolutePath "/etc/systemd/nspawn" ''
    Where `h-<agent>.nspawn` files are written (nspawn profile).
    systemd-nspawn@.service reads them only from /etc/systemd/nspawn and
    /run/systemd/nspawn.
  '';
  nixos_containers_dir = opt absolutePath "/etc/nixos-containers" ''
    Where `h-<agent>.conf` files are written (nixos profile); NixOS's
    container@.service reads them there.
  '';
  nixos_build_command = mkOption {
    type = types.listOf types.str;
    default = lib.optional (s.profile == "nixos") "${buildCommand}";
    defaultText = lib.literalMD ''
      with the nixos profile, a script printing the prebuilt system of
      `h-<name>`: the one of `agents.<name>` if declared, else the common
      agent system (nix/agent-module.nix plus `agentConfig`); else `[ ]`
    '';
    example = [ "nix" "build" "--no-link" "--print-out-paths" "/etc/hive#nixosConfigurations.agent.config.system.build.toplevel" ];
    description = ''
      Command (argv, no shell) that makes an agent's NixOS system (nixos
      profile): `h-<name>` is appended, the last line of its output is the
      system's store path. For an agent whose deployed config repo has
      `agent.nix`, the exported tree (a directory the hive owns) and the
      commit's sha are appended after the name: the command builds that
      module on top of the agent module. Run only on approved commits.
    '';
  };
  approval_command = opt (types.listOf types.str) [ ] ''
    Deprecated and ignored: the hive carries out every approval itself
    (`update_meta_inputs` with `nix_command` in `meta_flake`). Accepted
    so old configurations still load; the daemon warns at start when it
    is set.
  '';
  meta_flake = opt (types.nullOr absolutePath) null ''
    The hive's meta flake (nixos profile): a git repository with
    `flake.nix` and `flake.lock` that the hive owns (never an agent's). An
    approved `update_meta_inputs` runs `nix flake update` of the inputs it
    names there, commits `flake.lock` and rebuilds every agent whose base
    moved (what the lock pins is part of each agent's base). null:
    `update_meta_inputs` is refused, naming this option.
  '';
  nix_command = opt (types.listOf types.str) [ "nix" ] ''
    The `nix` (argv, no shell) the hive runs for `update_meta_inputs`:
    `<nix_command> --extra-experimental-features "nix-command flakes"
    flake update --flake <meta_flake> <inputs>` (Nix 2.19 or later). The
    module puts `nix.package` on the daemon's PATH in the nixos profile.
  '';
  auto_update = opt types.bool false ''
    At start, rebuild (and restart, if running) every agent whose base
    changed since it was built (`needs_update`: its rendered settings,
    grants, the hive's defaults under its `agent.json`). Off: the manager
    hears `needs_update` and runs `update`.
  '';
  notify_command = opt (types.listOf types.str) [ ] ''
    Command (argv, no shell) the hive runs to tell the operator that an
    agent needs a person, an approval waits or a container crashed: one
    JSON event on its stdin, one run at a time, each killed after 30 s,
    failures logged. Empty: none.
  '';
  notify_interval_secs = opt types.ints.unsigned 60
    "Least seconds between two runs of `notify_command` for the same event and agent.";
  agent_cpu_quota = opt (types.nullOr (types.strMatching "[0-9]+(\\.[0-9]+)?%")) "200%"
    "`CPUQuota=` of every agent container (200% = two CPUs); null for no limit.";
  agent_memory_max = opt (types.nullOr (types.strMatching "[0-9]+[KMGTPE]?|[0-9]+(\\.[0-9]+)?%|infinity")) "4G"
    "`MemoryMax=` of every agent container; null for no limit.";
  agent_tasks_max = opt (types.nullOr types.ints.positive) 4096
    "`TasksMax=` of every agent container: the processes and threads it may hold at once (an agent's `agent.json` `tasks_max` overrides it); null for no limit.";
  agent_inotify_instances = opt (types.ints.between 1 2147483647) 128
    "inotify instances each user of an agent's container may hold (its user namespace's `max_inotify_instances`, set at each start). The host's `fs.inotify.max_user_instances` is raised to hold `max_agents` agents at it.";
  agent_inotify_watches = opt (types.ints.between 1 2147483647) 65536
    "inotify watches each user of an agent's container may hold (its `max_inotify_watches`). The host's `fs.inotify.max_user_watches` is raised to hold `max_agents` agents at it.";
  agent_disk_quota = opt (types.nullOr (types.either (types.ints.between 1048576 9223372036854775807) (types.strMatching "[0-9]+[KMGT]?"))) "10G"
    "Bytes each agent's state (and nspawn image) directory may hold: a project quota set before each start; bytes, or a number with K, M, G or T (powers of 1024), at least 1M; null for no quota. Needs the state directory on XFS, or ext4 made with `-O quota,project`, mounted with `prjquota`; elsewhere agents run unlimited, with a warning at start.";
  agent_disk_inodes = opt types.ints.unsigned 1000000
    "Files and directories each agent may hold under the same project quota.";
  agent_disk_quota_required = opt types.bool false
    "Refuse to start an agent (`no_disk_quota`) whose state cannot be held to its disk quota, instead of running it unlimited.";
  max_agents = opt types.ints.positive 1000
    "Most agents the hive manages, the manager included; `spawn` past it is refused. The unit's `LimitNOFILE=` and `FileDescriptorStoreMax=` are raised to fit it (every agent socket at `agent_max_connections`), and the host's `fs.inotify` limits (every agent at its inotify caps).";
  max_body_bytes = opt types.ints.positive 65536 "Largest message body the broker accepts, in bytes.";
  agent_max_connections = opt types.ints.positive 16
    "Open connections one agent socket serves at once; past it a connection is told why and closed.";
  agent_idle_timeout_secs = opt types.ints.positive 600
    "An agent connection silent this long between requests (a long-polling recv is not silence) is closed.";
  agent_max_answer_bytes = opt types.ints.positive 4194304
    "Bytes of message bodies or journal text one answer on an agent socket carries at most.";
  inbox_max_messages = opt types.ints.positive 10000
    "Pending messages one agent's inbox holds; past it a send to it is refused.";
  inbox_max_bytes = opt types.ints.positive 67108864
    "Bytes of pending message bodies one agent's inbox holds; past it a send to it is refused.";
  transient_max_bytes = opt types.ints.positive 1048576
    "Bytes of transient wakes kept in memory per agent; past it the oldest are dropped.";
  agent_max_pending_approvals = opt types.ints.positive 16
    "Pending approval requests one agent (the manager included) may hold; past it a request is refused (`too_many_pending`) until the operator decides one. Asking the same again is answered with the pending row.";
  egress_allow = opt (types.listOf types.str) [ ] ''
    The `host[:port]` or `*.domain[:port]` patterns every agent may reach
    through the hive's egress proxy (the only way out of its container);
    `hivectl grant N --egress HOST` adds to them for one agent. None by
    default: agents reach the model through the hive's model gateway,
    which holds the credential and meters every request
    (`api.anthropic.com:443` here would let an agent's own key past both).
  '';
  model_credential = opt (types.nullOr (types.strMatching "[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")) null ''
    The name of one of `services.hive-c0re.modelGateway.credentials`: the
    credential the model gateway puts on every agent's requests to the
    model, in place of whatever the agent sent. Null: each agent's own
    login or key goes upstream as it came (metered all the same).
  '';
  egress_audit_rows_per_agent = opt types.ints.positive 2000
    "Rows of the egress audit (`hivectl egress-log`) kept per agent: its newest, so one agent's connections never push out another's.";
  budget_hive = opt (types.listOf (types.strMatching "[0-9]+(\\.[0-9]{1,6})?(usd|tokens)/(day|[0-9]+[mhd])")) [ ] ''
    Default budgets (spend caps) on the whole hive, e.g. `[ "100usd/day" ]`
    (AMOUNT as `hivectl budget set` takes it: usd or tokens, per UTC day
    or a rolling window like `5usd/5h`). A budget the operator sets on
    the hive replaces the default of its unit.
  '';
  budget_each_agent = opt (types.listOf (types.strMatching "[0-9]+(\\.[0-9]{1,6})?(usd|tokens)/(day|[0-9]+[mhd])")) [ ] ''
    Default budgets on each agent's own turns, e.g. `[ "10usd/day" ]`,
    unless the operator set a budget of that unit on the agent.
  '';
  budget_hard_cap = opt types.bool false ''
    A reached budget also ends the turns in progress of the agents it
    covers (as `hivectl interrupt` would, with a note saying which
    budget), and token budgets count a running turn's tokens. Off: a
    reached budget holds new turns only.
  '';
  budget_hold_secs = opt types.ints.unsigned 300 ''
    How long the model gateway holds a model request of an agent a
    reached budget holds, waiting for the budget to be raised, before it
    answers the request with the budget's error, in seconds (0: at once;
    more than a day is taken as a day). Keep it below Claude Code's own
    request timeout (10 minutes).
  '';
  message_retention_secs = opt types.ints.unsigned 604800 "How long handled messages are kept, in seconds.";
  journal_directory = opt (types.nullOr absolutePath) null ''
    Read logs from journal files in this directory instead of the host
    journal (container logs need the host journal).
  '';
  attention_after_secs = opt types.ints.unsigned 300 ''
    How long an agent may wait on a person (its hooks report a permission
    prompt, a question or idleness) before the manager gets a
    `needs_attention` event, in seconds; 0 = never.
  '';
  hive_name = opt (types.nullOr (types.strMatching "[a-z0-9-]{1,63}")) null ''
    This hive's name in its swarm: other hives address its agents as
    `agent@<hive_name>`. Required with `swarm`.
  '';
  swarm_name = opt (types.nullOr (types.strMatching "[a-z0-9-]{1,63}")) null ''
    The swarm's name (its NATS stream, subjects and roster bucket).
    Required with `swarm`.
  '';
  swarm = opt (types.nullOr (types.attrsOf types.anything)) null ''
    Joining a swarm over NATS JetStream: `urls`, `user` and
    `password_file` or `credentials_file`, `tls_ca_file`, `replicas` (see
    src/swarm/README.md). The module then opens the unit's network
    sandbox for TCP to NATS (PrivateNetwork=no, IPAddressDeny= cleared,
    AF_INET and AF_INET6). null: the hive runs alone, without network.
  '';
}
