# Render services.nginx.virtualHosts to nginx `server { }` blocks, after
# nixos/modules/services/web-servers/nginx/default.nix (its `vhosts`,
# `mkLocations`, `mkBasicAuth` and `recommendedProxyConfig`), for the options
# the stub declares: server_name, the vhost's basic auth, then each location
# (ordered by priority, then name) with proxy_pass, the websocket lines,
# return, extraConfig, the recommended proxy headers and the location's basic
# auth, then the vhost's extraConfig. Left out: listen lines (the harness
# adds its own), TLS, ACME and the http { } level (NixOS writes the
# recommended settings there only with services.nginx.recommendedProxySettings;
# they are inherited by locations without proxy_set_header of their own).
# NixOS `include`s a file with the recommended headers; they are written
# inline here, which nginx reads the same way.
{ config }:
let
  b = builtins;
  cfg = config.services.nginx;
  # nixpkgs' recommendedProxyConfig
  recommendedProxyConfig = ''
    proxy_set_header        Host $host;
    proxy_set_header        X-Real-IP $remote_addr;
    proxy_set_header        X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header        X-Forwarded-Proto $scheme;
    proxy_set_header        X-Forwarded-Host $host;
    proxy_set_header        X-Forwarded-Server $host;
  '';
  optional = c: s: if c then s else "";
  basicAuth = zone: optional (zone.basicAuthFile != null) ''
    auth_basic secured;
    auth_basic_user_file ${zone.basicAuthFile};
  '';
  sorted = locations: b.sort
    (x: y: if x.priority == y.priority then x.location < y.location else x.priority < y.priority)
    (b.attrValues (b.mapAttrs (k: v: v // { location = k; }) locations));
  location = l: ''
    location ${l.location} {
      ${optional (l.proxyPass != null) "proxy_pass ${l.proxyPass};"}
      ${optional l.proxyWebsockets ''
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
      ''}
      ${optional (l.return != null) "return ${l.return};"}
      ${l.extraConfig}
      ${optional (l.proxyPass != null && l.recommendedProxySettings) recommendedProxyConfig}
      ${basicAuth l}
    }
  '';
  server = name: v: ''
    server {
      server_name ${if v.serverName != null then v.serverName else name};
      ${basicAuth v}
      ${b.concatStringsSep "\n" (map location (sorted v.locations))}
      ${v.extraConfig}
    }
  '';
in
b.mapAttrs server cfg.virtualHosts
