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
#   - mkDefault (1000) < plain (100) < mkForce (50); defaults are 1500.
# What it does not do: mkBefore/mkAfter ordering, freeformType, readOnly,
# _module.args, disabledModules, renamed options; error texts differ.
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
    if b.all (d: d.value == first) defs then first
    else throw "The option `${showPath loc}' has conflicting definition values.";

  mkOptionType = { name, check ? (_: true), merge ? mergeUnique }:
    { _type = "option-type"; inherit name check merge; };

  # -- types -----------------------------------------------------------------
  types = rec {
    bool = mkOptionType { name = "boolean"; check = b.isBool; };
    int = mkOptionType { name = "signed integer"; check = b.isInt; };
    str = mkOptionType { name = "string"; check = b.isString; };
    lines = mkOptionType {
      name = "strings concatenated with \"\\n\"";
      check = b.isString;
      merge = _: defs: b.concatStringsSep "\n" (map (d: d.value) defs);
    };
    path = mkOptionType {
      name = "path";
      check = v: b.isPath v || (b.isString v && b.substring 0 1 v == "/");
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
    submodule = module: mkOptionType {
      name = "submodule";
      check = b.isAttrs;
      merge = loc: defs: (evalModules {
        prefix = loc;
        specialArgs.name = b.elemAt loc (b.length loc - 1);
        modules = [ module ] ++ map (d: { config = d.value; }) defs;
      }).config;
    };
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
            if called ? options || called ? config
            then { imports = called.imports or [ ]; options = called.options or { }; config = called.config or { }; }
            else { imports = called.imports or [ ]; options = { }; config = removeAttrs called [ "imports" "_file" "meta" ]; };
        in
        [ shaped ] ++ b.concatMap collect shaped.imports;
      loaded = b.concatMap collect modules;

      joinDecls = loc: decls:
        if b.any isOption decls then
          (if b.length decls == 1 then b.head decls
          else throw "The option `${showPath loc}' is declared more than once.")
        else b.zipAttrsWith (n: joinDecls (loc ++ [ n ])) decls;
      options = joinDecls prefix (map (m: m.options) loaded);

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
          in
          if undeclared != [ ] then
            throw "The option `${showPath (loc ++ [ (b.head undeclared) ])}' does not exist."
          else
            b.mapAttrs (n: sub: build (loc ++ [ n ]) sub (map (p: p.${n}) (b.filter (p: p ? ${n}) parts))) decl;

      config = build prefix options (map (m: m.config) loaded);
    in
    { inherit config options; };

  stubLib = {
    inherit mkOption mkEnableOption mkIf mkMerge mkOverride mkOptionType types evalModules;
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
    literalExpression = text: { _type = "literalExpression"; inherit text; };
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
