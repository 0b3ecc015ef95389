# A small stand-in for nixpkgs' `lib`, written for hive-c0re's offline checks
# (nixpkgs cannot be fetched where CI runs). It covers exactly what
# NixOS-module.nix, nix/package.nix, flake.nix and the test harness use.
#
# It is NOT nixpkgs. What it copies from nixpkgs' module system, because the
# checks depend on it:
#   - evalModules is strict: defining an undeclared option is an error naming
#     it ("The option `a.b' does not exist."), so typos fail;
#   - option values are type-checked, submodules are evaluated as modules;
#   - `mkIf`/`mkMerge`/priorities are pushed into attribute sets without
#     evaluating conditions, so `config = mkIf cfg.enable { ... }` does not
#     recurse into itself;
#   - mkDefault (1000) < plain (100) < mkForce (50); defaults are 1500;
#   - `freeformType` (RFC 42): at the root of a module evaluation (a
#     submodule such as `settings`), definitions of undeclared names are
#     merged with the freeform type instead of failing; declared names keep
#     their own types and defaults, and both end up in the value;
#   - a submodule defined in several places (or with mkDefault inside) is
#     one evaluation of all those definitions, priorities applying per key.
# What it does not do: mkBefore/mkAfter ordering, readOnly, _module.args,
# disabledModules, renamed/removed options, declaring one option twice
# (nixpkgs merges two submodule declarations; here it is an error), type
# checks of `submodule` definitions given as functions; error texts differ.
let
  b = builtins;

  isTagged = tag: v: b.isAttrs v && (v._type or null) == tag;
  isOption = isTagged "option";
  isDerivation = v: b.isAttrs v && (v.type or null) == "derivation";
  showPath = loc: b.concatStringsSep "." loc;
  showValue = v:
    if b.isString v then "\"${v}\""
    else if b.isInt v || b.isBool v || v == null then b.toJSON v
    else "a ${b.typeOf v}";

  # -- definition wrappers -------------------------------------------------
  mkIf = condition: content: { _type = "if"; inherit condition content; };
  mkMerge = contents: { _type = "merge"; inherit contents; };
  mkOverride = priority: content: { _type = "override"; inherit priority content; };

  # One definition of one option -> [ { prio, value } ]; mkIf conditions are
  # forced here, and only here.
  flatten = prio: v:
    if isTagged "merge" v then b.concatMap (flatten prio) v.contents
    else if isTagged "if" v then
      (if !b.isBool v.condition
      then throw "mkIf was given a condition that is not a bool (${b.typeOf v.condition})"
      else if v.condition then flatten prio v.content else [ ])
    else if isTagged "override" v then flatten v.priority v.content
    else [{ inherit prio; value = v; }];

  # An attribute-set definition -> list of plain attrsets whose values carry
  # the wrappers (conditions are NOT evaluated: the key to lazy mkIf).
  distribute = v:
    if isTagged "merge" v then b.concatMap distribute v.contents
    else if isTagged "if" v then map (b.mapAttrs (_: mkIf v.condition)) (distribute v.content)
    else if isTagged "override" v then map (b.mapAttrs (_: mkOverride v.priority)) (distribute v.content)
    else if b.isAttrs v then [ v ]
    else throw "expected an attribute set, got a ${b.typeOf v}";

  highestPriority = defs:
    let top = b.foldl' (m: d: if d.prio < m then d.prio else m) 10000 defs;
    in b.filter (d: d.prio == top) defs;

  mergeUnique = loc: defs:
    let first = (b.head defs).value; in
    if b.length defs == 1 || b.all (d: d.value == first) defs then first
    else throw "The option `${showPath loc}' has conflicting definition values.";

  mkOptionType = { name, check ? (_: true), merge ? mergeUnique }:
    { _type = "option-type"; inherit name check merge; };

  # -- types -----------------------------------------------------------------
  types = rec {
    bool = mkOptionType { name = "boolean"; check = b.isBool; };
    int = mkOptionType { name = "signed integer"; check = b.isInt; };
    str = mkOptionType { name = "string"; check = b.isString; };
    float = mkOptionType { name = "floating point number"; check = b.isFloat; };
    ints = {
      unsigned = mkOptionType { name = "unsigned integer, meaning >=0"; check = v: b.isInt v && v >= 0; };
      positive = mkOptionType { name = "positive integer, meaning >0"; check = v: b.isInt v && v > 0; };
      between = lo: hi: mkOptionType {
        name = "integer between ${toString lo} and ${toString hi} (both inclusive)";
        check = v: b.isInt v && v >= lo && v <= hi;
      };
    };
    raw = mkOptionType { name = "raw value"; };
    # A NixOS module kept for later evaluation; definitions are collected
    # as imports, as nixpkgs' deferredModule does.
    deferredModule = mkOptionType {
      name = "module";
      check = v: b.isAttrs v || b.isFunction v || b.isPath v;
      merge = _: defs: { imports = map (d: d.value) defs; };
    };
    lines = mkOptionType {
      name = "strings concatenated with \"\\n\"";
      check = b.isString;
      merge = _: defs: b.concatStringsSep "\n" (map (d: d.value) defs);
    };
    path = mkOptionType {
      name = "path";
      # as nixpkgs: anything string-like (a derivation too) that is absolute
      check = v: b.isPath v || ((b.isString v || (b.isAttrs v && v ? outPath)) && b.substring 0 1 (toString v) == "/");
    };
    package = mkOptionType { name = "package"; check = isDerivation; };
    enum = values: mkOptionType {
      name = "one of ${b.concatStringsSep ", " (map (v: "\"${v}\"") values)}";
      check = v: b.elem v values;
    };
    strMatching = re: mkOptionType {
      name = "string matching the pattern ${re}";
      check = v: b.isString v && b.match re v != null;
    };
    nullOr = t: mkOptionType {
      name = "null or ${t.name}";
      check = v: v == null || t.check v;
      merge = loc: defs:
        if b.all (d: d.value == null) defs then null
        else if b.any (d: d.value == null) defs
        then throw "The option `${showPath loc}' is defined both null and not null."
        else t.merge loc defs;
    };
    either = t1: t2: mkOptionType {
      name = "${t1.name} or ${t2.name}";
      check = v: t1.check v || t2.check v;
      merge = loc: defs:
        if b.all (d: t1.check d.value) defs then t1.merge loc defs
        else if b.all (d: t2.check d.value) defs then t2.merge loc defs
        else mergeUnique loc defs;
    };
    oneOf = ts: b.foldl' either (b.head ts) (b.tail ts);
    listOf = t: mkOptionType {
      name = "list of ${t.name}";
      check = b.isList;
      merge = loc: defs: b.concatMap
        (d: b.genList
          (i: mergeDefs t (loc ++ [ "[${toString i}]" ]) [{ inherit (d) prio; value = b.elemAt d.value i; }])
          (b.length d.value))
        defs;
    };
    attrsOf = t: mkOptionType {
      name = "attribute set of ${t.name}";
      check = b.isAttrs;
      merge = loc: defs:
        let
          parts = b.concatMap (d: map (value: { inherit (d) prio; inherit value; }) (distribute d.value)) defs;
          names = b.attrNames (b.foldl' (acc: p: acc // p.value) { } parts);
          defsOf = n: map (p: { inherit (p) prio; value = p.value.${n}; }) (b.filter (p: p.value ? ${n}) parts);
          # as in nixpkgs, a name whose definitions are all `mkIf false` is absent
          present = b.filter (n: b.concatMap (d: flatten d.prio d.value) (defsOf n) != [ ]) names;
        in
        b.listToAttrs (map (n: { name = n; value = mergeDefs t (loc ++ [ n ]) (defsOf n); }) present);
    };
    # Free-form data: attrsets merge by key, lists concatenate, else equal.
    anything = mkOptionType {
      name = "anything";
      merge = loc: defs:
        if b.all (d: b.isAttrs d.value && !isDerivation d.value) defs then (attrsOf anything).merge loc defs
        else if b.all (d: b.isList d.value) defs then b.concatMap (d: d.value) defs
        else mergeUnique loc defs;
    };
    # `module` is kept (as `getSubModules` is in nixpkgs) so the tests can
    # list the declared keys of a submodule.
    submodule = module: mkOptionType
      {
        name = "submodule";
        check = b.isAttrs;
        merge = loc: defs: (evalModules {
          prefix = loc;
          specialArgs.name = b.elemAt loc (b.length loc - 1);
          modules = [ module ] ++ map (d: { config = d.value; }) defs;
        }).config;
      } // { inherit module; };
  };

  # Merge [ { prio, value } ] (values may still be wrapped) with type t.
  mergeDefs = t: loc: defs:
    let
      flat = highestPriority (b.concatMap (d: flatten d.prio d.value) defs);
      wrong = b.filter (d: !t.check d.value) flat;
    in
    if flat == [ ] then throw "The option `${showPath loc}' is used but not defined."
    else if wrong != [ ] then
      throw "A definition for option `${showPath loc}' is not of type `${t.name}'. Definition value: ${showValue (b.head wrong).value}"
    else t.merge loc flat;

  mkOption = attrs: attrs // { _type = "option"; type = attrs.type or types.anything; };
  # As nixpkgs' mkPackageOption for a package at the top of `pkgs`.
  mkPackageOption = pkgs: name: { default ? name, example ? null, extraDescription ? "" }:
    mkOption ({
      type = types.package;
      default = pkgs.${default};
      defaultText = literalExpression "pkgs.${default}";
      description = "The ${name} package to use." + (if extraDescription == "" then "" else " " + extraDescription);
    } // (if example == null then { } else { example = literalExpression "pkgs.${example}"; }));
  literalExpression = text: { _type = "literalExpression"; inherit text; };
  mkEnableOption = what: mkOption {
    type = types.bool;
    default = false;
    example = true;
    description = "Whether to enable ${what}.";
  };

  # -- the module system -------------------------------------------------------
  evalModules = { modules, specialArgs ? { }, prefix ? [ ] }:
    let
      moduleArgs = specialArgs // { inherit config options; lib = stubLib; };
      collect = m:
        let
          fn = if b.isPath m || b.isString m then import m else m;
          called =
            if !b.isFunction fn then fn
            else if b.functionArgs fn == { } then fn moduleArgs
            else fn (b.intersectAttrs (b.functionArgs fn) moduleArgs);
          shaped =
            if called ? options || called ? config || called ? freeformType
            then {
              imports = called.imports or [ ];
              options = called.options or { };
              config = withMeta (called.config or { });
              freeformType = called.freeformType or null;
            }
            else {
              imports = called.imports or [ ];
              options = { };
              config = withMeta (removeAttrs called [ "imports" "_file" "meta" "key" ]);
              freeformType = null;
            };
          # as nixpkgs: a module's top-level `meta` is shorthand for config.meta
          withMeta = c: if called ? meta then mkMerge [ c { meta = called.meta; } ] else c;
        in
        [ shaped ] ++ b.concatMap collect shaped.imports;
      loaded = b.concatMap collect modules;

      joinDecls = loc: decls:
        if b.any isOption decls then
          (if b.length decls == 1 then b.head decls
          else throw "The option `${showPath loc}' is declared more than once.")
        else b.zipAttrsWith (n: joinDecls (loc ++ [ n ])) decls;
      options = joinDecls prefix (map (m: m.options) loaded);
      freeformTypes = b.filter (t: t != null) (map (m: m.freeformType) loaded);
      freeformType = if freeformTypes == [ ] then null else b.head freeformTypes;

      build = loc: decl: defs:
        if isOption decl then
          let
            all = map (value: { prio = 100; inherit value; }) defs
              ++ (if decl ? default then [{ prio = 1500; value = decl.default; }] else [ ]);
          in
          (decl.apply or (v: v)) (mergeDefs decl.type loc all)
        else
          let
            parts = b.concatMap distribute defs;
            undeclared = b.filter (n: !(decl ? ${n})) (b.concatMap b.attrNames parts);
            # Only the root of an evaluation is free-form, as in nixpkgs.
            freeform = loc == prefix && freeformType != null;
            freeValue =
              if undeclared == [ ] then { }
              else if !freeform then throw "The option `${showPath (loc ++ [ (b.head undeclared) ])}' does not exist."
              else
                mergeDefs freeformType loc (map
                  (p: { prio = 100; value = removeAttrs p (b.attrNames decl); })
                  (b.filter (p: b.any (n: !(decl ? ${n})) (b.attrNames p)) parts));
          in
          freeValue // b.mapAttrs (n: sub: build (loc ++ [ n ]) sub (map (p: p.${n}) (b.filter (p: p ? ${n}) parts))) decl;

      config = build prefix options (map (m: m.config) loaded);
    in
    { inherit config options; };

  stubLib = {
    inherit mkOption mkEnableOption mkPackageOption mkIf mkMerge mkOverride mkOptionType types evalModules
      literalExpression;
    mkDefault = mkOverride 1000;
    mkForce = mkOverride 50;
    optional = cond: x: if cond then [ x ] else [ ];
    optionals = cond: xs: if cond then xs else [ ];
    optionalString = cond: s: if cond then s else "";
    optionalAttrs = cond: a: if cond then a else { };
    concatStringsSep = b.concatStringsSep;
    concatMapStringsSep = sep: f: xs: b.concatStringsSep sep (map f xs);
    genAttrs = names: f: b.listToAttrs (map (n: { name = n; value = f n; }) names);
    filterAttrs = pred: set: removeAttrs set (b.filter (n: !pred n set.${n}) (b.attrNames set));
    getExe = p: "${p}/bin/${p.meta.mainProgram}";
    literalMD = text: { _type = "literalMD"; inherit text; };
    attrNames = b.attrNames;
    attrValues = b.attrValues;
    mapAttrs = b.mapAttrs;
    mapAttrsToList = f: set: map (n: f n set.${n}) (b.attrNames set);
    mapAttrs' = f: set: b.listToAttrs (map (n: f n set.${n}) (b.attrNames set));
    nameValuePair = name: value: { inherit name value; };
    elem = b.elem;
    filter = b.filter;
    any = b.any;
    all = b.all;
    subtractLists = remove: b.filter (x: !(b.elem x remove));
    hasPrefix = pre: s: b.substring 0 (b.stringLength pre) s == pre;
    match = b.match;
    escapeShellArg = s: "'${b.replaceStrings [ "'" ] [ "'\\''" ] (toString s)}'";
    escapeShellArgs = xs: b.concatStringsSep " " (map stubLib.escapeShellArg xs);
    concatStrings = b.concatStringsSep "";
    concatMapStrings = f: xs: b.concatStringsSep "" (map f xs);
    getExe' = p: n: "${p}/bin/${n}";
    getName = p: p.pname or (b.parseDrvName p.name).name;
    maintainers = { };
    importTOML = file: b.fromTOML (b.readFile file);
    # Only the shape package.nix uses; the real one copies just the listed files.
    fileset = {
      toSource = { root, fileset }: builtins.seq fileset root;
      unions = list: list;
    };
    licenses.mit = { spdxId = "MIT"; shortName = "mit"; };
    platforms.linux = [ "x86_64-linux" "aarch64-linux" ];
  };
in
stubLib
