#!/usr/bin/env bash
# The service's size per type (issue 45's first measure): for each type with
# an `impl` block in a file under src/service (test files left out), its
# methods in inherent impls (`impl T { .. }`), how many of them are `pub`
# (not `pub(crate)`/`pub(super)`), its methods in trait impls
# (`impl Tr for T`), its impl blocks and the files they stand in; the
# largest first. Run from anywhere: `tests/measure_service.sh [DIR]`
# (DIR defaults to the repo's src/service).
#
# Read as the compiler would, enough for this count: comments, string,
# raw-string and char literals are dropped before braces are counted, so a
# `{` in a message does not open a block; a method is a `fn` one brace deep
# in an impl block (a function nested in a method is not counted), and an
# impl block is an `impl` that starts an item (after `}`, `;`, an attribute
# or the file's start), not `impl Trait` in a signature.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$here/src/service}
find "$dir" -name '*.rs' ! -name '*_tests.rs' ! -name 'tests.rs' -print0 | sort -z |
    xargs -0 awk '
function flush_token(t) {
    # one token of code: an identifier, or a single character
    if (header) {
        if (t == "<") angle++
        else if (t == ">") { if (angle > 0) angle-- }
        else if (t == "where") header_done = 1
        else if (t == "{") {
            header = 0; kind = (saw_for ? "trait" : "inherent")
            impl_type = last_ident; impl_depth = depth; depth++
            blocks[impl_type]++; key = impl_type SUBSEP FILENAME
            if (!(key in seen)) { seen[key] = 1; files[impl_type]++ }
            prev = t; return
        }
        else if (t ~ /^[A-Za-z_]/ && angle == 0 && !header_done) {
            if (t == "for") saw_for = 1
            else if (t != "impl" && t != "dyn" && t != "mut") last_ident = t
        }
        prev = t; return
    }
    if (t == "{") { depth++; prev = t; return }
    if (t == "}") {
        depth--
        if (impl_depth >= 0 && depth == impl_depth) impl_depth = -1
        prev = t; return
    }
    if (t == "impl" && depth == 0 && (prev == "" || prev == "}" || prev == ";" || prev == "]" || prev == "unsafe")) {
        header = 1; angle = 0; saw_for = 0; header_done = 0; last_ident = ""
        prev = t; return
    }
    if (t == "fn" && impl_depth >= 0 && depth == impl_depth + 1) {
        if (kind == "inherent") {
            methods[impl_type]++
            if (p1 == "pub" || (p2 == "pub" && (p1 == "async" || p1 == "const" || p1 == "unsafe"))) pubs[impl_type]++
        } else trait_methods[impl_type]++
    }
    p2 = p1; p1 = t; prev = t
}
FNR == 1 { depth = 0; state = ""; impl_depth = -1; header = 0; prev = ""; p1 = ""; p2 = "" }
{
    line = $0; n = length(line); i = 1; word = ""
    while (i <= n) {
        c = substr(line, i, 1); d = substr(line, i, 2)
        if (state == "block") {
            if (d == "*/") { if (--nest == 0) state = ""; i += 2; continue }
            if (d == "/*") { nest++; i += 2; continue }
            i++; continue
        }
        if (state == "str") {
            if (c == "\\") { i += 2; continue }
            if (c == "\"") state = ""
            i++; continue
        }
        if (state == "raw") {
            if (substr(line, i, length(rawend)) == rawend) { state = ""; i += length(rawend); continue }
            i++; continue
        }
        if (c ~ /[A-Za-z0-9_]/) {
            # a raw string starts r" or r#"; b"..", br".." are strings too
            if (word == "" || word == "b") {
                if (match(substr(line, i), /^r#*"/)) {
                    rawend = "\"" substr(line, i + 1, RLENGTH - 2)
                    state = "raw"; word = ""; i += RLENGTH; continue
                }
            }
            word = word c; i++; continue
        }
        if (word != "") { if (word != "b" || c != "\"") flush_token(word); word = "" }
        if (d == "//") break
        if (d == "/*") { state = "block"; nest = 1; i += 2; continue }
        if (c == "\"") { state = "str"; i++; continue }
        if (c == "\047") {
            # a char literal (a lifetime has no closing quote)
            if (match(substr(line, i), /^\047(\\[^\047]+|[^\\\047])\047/)) { i += RLENGTH; continue }
            i++; continue
        }
        if (c != " " && c != "\t") flush_token(c)
        i++
    }
    if (word != "") flush_token(word)
}
END {
    for (t in blocks)
        printf "%d\t%d\t%d\t%d\t%d\t%s\n", methods[t] + 0, pubs[t] + 0, trait_methods[t] + 0, blocks[t], files[t], t
}' | sort -t$'\t' -k1,1nr -k6,6 | {
    printf 'methods\tpub\ttrait\tblocks\tfiles\ttype\n'
    cat
}
