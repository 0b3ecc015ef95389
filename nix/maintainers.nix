# meta.maintainers entries of the NixOS modules, in nixpkgs' maintainer-list
# shape. The project is not in nixpkgs and names no person here:
# upstreaming replaces this with entries of lib.maintainers.
{
  hive-c0re = {
    name = "hive-c0re developers";
  };
}
