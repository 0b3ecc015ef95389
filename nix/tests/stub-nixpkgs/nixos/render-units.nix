# Render the evaluated systemd.services / systemd.sockets to unit text, after
# nixos/lib/systemd-lib.nix: [Unit] dependencies and X-Restart-Triggers,
# Environment= from `path` and `environment`, then serviceConfig/socketConfig
# verbatim (a list gives one line per element, booleans true/false).
# NixOS writes this text as `<unit>.d/overrides.conf` when a package in
# systemd.packages ships the unit, else as the unit itself; the harness does
# the same. [Install] is not rendered: NixOS makes wantedBy symlinks instead.
# NixOS's own additions (its default PATH, LOCALE_ARCHIVE, TZDIR) are left out.
{ config }:
let
  b = builtins;
  show = v: if b.isBool v then (if v then "true" else "false") else toString v;
  assign = key: v:
    if b.isList v then b.concatStringsSep "" (map (x: "${key}=${show x}\n") v)
    else "${key}=${show v}\n";
  section = name: attrs:
    if attrs == { } then ""
    else "[${name}]\n" + b.concatStringsSep "" (b.attrValues (b.mapAttrs assign attrs)) + "\n";
  nonEmpty = b.filter (x: x.value != [ ] && x.value != "");
  toAttrs = xs: b.listToAttrs (nonEmpty xs);

  unitSection = u: section "Unit" (toAttrs [
    { name = "Description"; value = u.description; }
    { name = "Wants"; value = u.wants; }
    { name = "Requires"; value = u.requires; }
    { name = "After"; value = u.after; }
    { name = "Before"; value = u.before; }
    { name = "BindsTo"; value = u.bindsTo; }
    { name = "PartOf"; value = u.partOf; }
    { name = "Conflicts"; value = u.conflicts; }
    { name = "X-Restart-Triggers"; value = b.concatStringsSep " " (map toString u.restartTriggers); }
  ] // u.unitConfig);

  environment = u:
    (if u.path == [ ] then [ ] else [ "PATH=${b.concatStringsSep ":" (map (p: "${p}/bin") u.path)}" ])
    ++ map (k: "${k}=${u.environment.${k}}") (b.filter (k: u.environment.${k} != null) (b.attrNames u.environment));

  serviceText = u: unitSection u
    + section "Service" (toAttrs [{ name = "Environment"; value = map (e: "\"${e}\"") (environment u); }] // u.serviceConfig);
  socketText = u: unitSection u
    + section "Socket" (toAttrs [
    { name = "ListenStream"; value = u.listenStreams; }
    { name = "ListenDatagram"; value = u.listenDatagrams; }
  ] // u.socketConfig);

  render = suffix: text: units: b.listToAttrs (map
    (n: { name = "${n}.${suffix}"; value = text units.${n}; })
    (b.filter (n: units.${n}.enable) (b.attrNames units)));
in
render "service" serviceText config.systemd.services
  // render "socket" socketText config.systemd.sockets
