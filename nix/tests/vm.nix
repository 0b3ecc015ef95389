# NixOS VM test of the host module: boot, sockets, operators' access (hivectl,
# the dashboard on web.sock and behind nginx), agents
# spawned (declared and not) with hive-agent running in their containers.
#
# Written as nixpkgs' nixos/tests/*.nix are (a runTest module); the flake
# runs it as checks.<system>.vm:
#   nix build .#checks.x86_64-linux.vm        (needs nixpkgs and KVM)
# Not run where hive-c0re is developed (no nixpkgs, no KVM): nix/tests/run
# evaluates the node with the stub and checks the test script's syntax.
#
# Claude Code is replaced by a stand-in `claude` (the real one is unfree and
# needs an account); the test is about the hive spawning, not the model.
{ ... }:
{
  name = "hive-c0re";
  meta.maintainers = [ (import ../maintainers.nix).hive-c0re ];

  nodes.machine = { pkgs, ... }: {
    imports = [ ../../NixOS-module.nix ];
    virtualisation.memorySize = 2048;
    virtualisation.diskSize = 4096;

    # for the dashboard's checks below
    environment.systemPackages = [ pkgs.curl ];
    environment.etc."hive-test.htpasswd".text = "alice:{PLAIN}dashboard-password";

    services.hive-c0re = {
      enable = true;
      settings.domain = "hive.test";
      dashboard.nginx = {
        enable = true;
        basicAuthFile = "/etc/hive-test.htpasswd";
      };
      agents.scout = { };
      agentConfig = { pkgs, ... }: {
        services.hive-agent.claudePackage = pkgs.writeShellScriptBin "claude" "echo stand-in; exit 0";
      };
    };

    users.users.alice = {
      isNormalUser = true;
      extraGroups = [ "hive-admin" ];
    };
    users.users.bob.isNormalUser = true;
  };

  testScript = ''
    machine.wait_for_unit("hive-c0re.socket")
    machine.wait_for_unit("hive-c0re.service")

    with subtest("members of hive-admin use hivectl, others cannot"):
        machine.succeed("su - alice -c 'hivectl status'")
        machine.fail("su - bob -c 'hivectl status'")

    with subtest("the declared agent is spawned at boot and runs hive-agent"):
        machine.wait_for_unit("hive-c0re-agents.service")
        machine.succeed("hivectl list | grep -qx scout")
        machine.wait_until_succeeds("systemctl is-active container@h-scout.service", timeout=120)
        machine.wait_until_succeeds("systemctl --machine=h-scout is-active hive-agent.service", timeout=120)

    with subtest("an agent spawned by hand gets the common agent system"):
        machine.succeed("su - alice -c 'hivectl spawn helper'")
        machine.wait_until_succeeds("systemctl --machine=h-helper is-active hive-agent.service", timeout=120)

    with subtest("the dashboard: web.sock is its socket unit's, for hive-admin only"):
        machine.wait_for_unit("hive-c0re-web.socket")
        machine.succeed("test \"$(stat -c '%a %U %G' /run/hyperhive/web.sock)\" = '660 root hive-admin'")
        machine.succeed("su - alice -c 'curl -sf --unix-socket /run/hyperhive/web.sock http://localhost/' | grep -q 'Roster'")
        machine.fail("su - bob -c 'curl -sf --unix-socket /run/hyperhive/web.sock http://localhost/'")

    with subtest("the dashboard behind nginx: a password, and the rows' agent URLs reach the agent's page"):
        machine.wait_for_unit("nginx.service")
        machine.succeed("test \"$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: hive.test' http://localhost/)\" = 401")
        machine.succeed("curl -sf -u alice:dashboard-password -H 'Host: hive.test' http://localhost/agent/scout/ | grep -q 'scout · hive'")

    with subtest("the roster shows both, and a restart of the daemon keeps them"):
        machine.succeed("systemctl restart hive-c0re.service")
        status = machine.succeed("su - alice -c 'hivectl status'")
        assert "scout" in status and "helper" in status, status
  '';
}
