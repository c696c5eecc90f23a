#!/bin/sh
# The names the documentation gives must be the code's, both ways:
#  - every log tag ADFnnnnn the code logs has a row in docs/log-messages.md
#    with the level the code logs it at; every ADFnnnnn named anywhere in
#    the documentation is one the code logs;
#  - every httpd tag AHnnnnn named in the documentation is httpd's (found
#    in the apache2 binary or its modules), never this module's;
#  - every request note the code sets has a row in docs/directives.md, and
#    every adaptive_deflate_* note named anywhere is one the code sets;
#  - every reason value has a row in docs/directives.md's reason table,
#    and every reason named anywhere is one the code has;
#  - the server-status?auto keys and the ?json fields in docs/monitoring.md
#    are those adf_status.c writes.
# TAP: one result per name checked.
set -u
top=${srcdir:-.}
cd "$top" || exit 1
docs="README.md docs/*.md conf/adaptive_deflate.conf tools/adaptive-precompress.1"
# Every source file of the module and libadf (unquoted where used: a glob).
srcs="./*.c libadf/*.c libadf/*/*.c httpd/*.c httpd/*/*.c"
tap=0
fail=0
ok() { tap=$((tap + 1)); echo "ok $tap"; }
bad() { tap=$((tap + 1)); fail=$((fail + 1)); echo "not ok $tap - $*"; }
# same SET_A SET_B WHAT_A WHAT_B: every line of A in B and of B in A
same() {
    for x in $1; do
        if printf '%s\n' $2 | grep -qxF -- "$x"; then ok; else bad "$x: $3, not $4"; fi
    done
    for x in $2; do
        if printf '%s\n' $1 | grep -qxF -- "$x"; then ok; else bad "$x: $4, not $3"; fi
    done
}

# ---- log tags ---------------------------------------------------------------
# "TAG LEVEL" for every ADFLOGNO in the code, from the ap_log_* call it is in.
src_tags=$(awk '
    /ap_log_[a-z]*error\(/ { stmt = ""; inlog = 1 }
    inlog { stmt = stmt " " $0 }
    inlog && /ADFLOGNO\(/ {
        match(stmt, /ADFLOGNO\([0-9]+\)/)
        tag = "ADF" substr(stmt, RSTART + 9, RLENGTH - 10)
        lvl = "?"
        if (match(stmt, /APLOG_(EMERG|ALERT|CRIT|ERR|WARNING|NOTICE|INFO|DEBUG)/))
            lvl = substr(stmt, RSTART + 6, RLENGTH - 6)
        print tag, lvl
        stmt = ""
    }
    inlog && /;/ { inlog = 0 }
' $srcs | sed 's/ ERR$/ error/; s/ WARNING$/ warn/' | tr 'A-Z' 'a-z' \
    | sed 's/^adf/ADF/' | sort -u)
nlog=$(cat $srcs | grep -o 'ADFLOGNO(' | wc -l)
nfound=$(awk '/ap_log_[a-z]*error\(/ {s=1} s && /ADFLOGNO\(/ {n++} s && /;/ {s=0} END {print n+0}' $srcs)
if [ -n "$src_tags" ] && [ "$nlog" = "$nfound" ]; then ok; else
    bad "found $nfound of the code's $nlog ADFLOGNO() inside ap_log_* calls"
fi
for t in $(printf '%s\n' "$src_tags" | cut -d' ' -f1 | uniq -d); do
    bad "$t is logged at two levels"
done
doc_rows=$(sed -n 's/^| `\(ADF[0-9]\{5\}\)` | \([a-z]*\) |.*/\1 \2/p' docs/log-messages.md | sort)
for t in $(printf '%s\n' "$doc_rows" | cut -d' ' -f1 | uniq -d); do
    bad "$t has two rows in docs/log-messages.md"
done
printf '%s\n' "$src_tags" | while read -r tag lvl; do
    row=$(printf '%s\n' "$doc_rows" | grep "^$tag ")
    if [ -z "$row" ]; then
        echo "FAIL: $tag is logged but has no row in docs/log-messages.md"
    elif [ "$row" != "$tag $lvl" ]; then
        echo "FAIL: $tag is logged at $lvl; docs/log-messages.md says ${row#* }"
    fi
done > "${TMPDIR:-/tmp}/adf-docrefs.$$"
if [ -s "${TMPDIR:-/tmp}/adf-docrefs.$$" ]; then
    cat "${TMPDIR:-/tmp}/adf-docrefs.$$"
    fail=$((fail + $(wc -l < "${TMPDIR:-/tmp}/adf-docrefs.$$")))
else
    pass=$((pass + $(printf '%s\n' "$src_tags" | wc -l)))
fi
rm -f "${TMPDIR:-/tmp}/adf-docrefs.$$"
# shellcheck disable=SC2086
named=$(grep -oh 'ADF[0-9]\{5\}' $docs | sort -u)
same "$named" "$(printf '%s\n' "$src_tags" | cut -d' ' -f1)" \
     "named in the documentation" "logged by the code"

# ---- httpd's tags -------------------------------------------------------------
if grep -n 'APLOGNO(\|AH[0-9]\{5\}' $srcs; then
    bad "the code uses httpd's AHnnnnn tags (ADFLOGNO only)"
else
    ok
fi
apxs=$(command -v apxs || command -v apxs2 || echo /usr/bin/apxs)
httpd="$("$apxs" -q SBINDIR 2>/dev/null)/$("$apxs" -q TARGET 2>/dev/null)"
moddir=$("$apxs" -q LIBEXECDIR 2>/dev/null)
if [ ! -x "$httpd" ]; then
    bad "httpd ($httpd) not found: cannot check the AHnnnnn tags of the documentation"
else
    # shellcheck disable=SC2086
    for t in $(grep -oh 'AH[0-9]\{5\}' $docs | sort -u); do
        if grep -qaF "$t" "$httpd" || grep -qlaF "$t" "$moddir"/*.so; then ok; else
            bad "$t is named in the documentation but httpd ($httpd, $moddir) never logs it"
        fi
    done
fi

# ---- request notes ------------------------------------------------------------
src_notes=$(grep -ohE 'ADF_NOTE_PREFIX "[a-z_]*"|adf_note\(r, "[a-z_]*"' $srcs \
            | sed 's/.*"\(.*\)"/adaptive_deflate_\1/' | sort -u)
[ -n "$src_notes" ] || bad "no request note found in the code"
rows=$(sed -n 's/^| `\(adaptive_deflate_[a-z_]*\)` |.*/\1/p' docs/directives.md | sort -u)
same "$src_notes" "$rows" "set by the code" "in the notes table of docs/directives.md"
# shellcheck disable=SC2086
# Metric families (docs/monitoring.md's ?metrics table) share the prefix.
metrics=$(sed -n 's/^| `\(adaptive_deflate_[a-z_]*\)` | \(gauge\|counter\) |.*/\1/p' \
          docs/monitoring.md | sort -u)
named=$(grep -oh 'adaptive_deflate_[a-z_]*' $docs | grep -vx 'adaptive_deflate_module' \
        | grep -vxF "$metrics" | sort -u)
for n in $named; do
    if printf '%s\n' $src_notes | grep -qxF "$n"; then ok; else
        bad "$n is named in the documentation but the code sets no such note"
    fi
done

# ---- reasons --------------------------------------------------------------------
src_reasons=$(awk '/reason_names\[ADF_NREASONS\] = \{/ {on = 1; next}
                   on && /\};/ {on = 0} on' libadf/adf_policy.c \
              | grep -o '"[a-z-]*"' | tr -d '"' | sort -u)
[ -n "$src_reasons" ] || bad "no reason found in libadf/adf_policy.c"
rows=$(awk '/^## Reasons$/ {on = 1; next} /^#/ {on = 0} on' docs/directives.md \
       | sed -n 's/^| `\([a-z-]*\)` |.*/\1/p' | sort -u)
same "$src_reasons" "$rows" "a reason in the code" "in the reason table of docs/directives.md"
# shellcheck disable=SC2086
named=$( (grep -oh 'reason=[a-z-]*' $docs | sed 's/reason=//'
          grep -oh 'reason\( note\)\{0,1\} `[a-z-]*`' $docs | sed 's/.*`\(.*\)`/\1/'
          grep -oh '`reasons\.[a-z-]*`' $docs | sed 's/`reasons\.\(.*\)`/\1/') | sort -u)
for n in $named; do
    if printf '%s\n' $src_reasons | grep -qxF "$n"; then ok; else
        bad "reason '$n' is named in the documentation but the code has no such reason"
    fi
done

# ---- the status page's fields -------------------------------------------------
src_auto=$(grep -o 'ap_rprintf(r, "AdaptiveDeflate[A-Za-z]*: ' httpd/status/adf_status.c \
           | sed 's/.*"\(AdaptiveDeflate[A-Za-z]*\): /\1/' | sort -u)
rows=$(sed -n 's/^| `\(AdaptiveDeflate[A-Za-z]*\)` |.*/\1/p' docs/monitoring.md | sort -u)
same "$src_auto" "$rows" "a server-status?auto key" "in docs/monitoring.md"
# JSON keys: "name": in the writer (before the HTML page), the names given
# to json_counts, and the kinds of body of the model.
# The counters' JSON names are the first string of each row of counters[];
# the compressed cache writes its object itself.
code=$(cat httpd/status/adf_status.c httpd/cache/adf_cache.c)
src_json=$( (printf '%s\n' "$code" | grep -o '\\"[a-z_]*\\":' | tr -d '\\":'
             awk '/^static const counter_t counters\[\] = \{/ {on = 1; next}
                  on && /^\};/ {on = 0} on' httpd/status/adf_status.c \
                 | sed -n 's/^ *{ "\([a-z_]*\)",.*/\1/p'
             printf '%s\n' "$code" | grep 'kinds\[' | grep -o '"[a-z]*"' | tr -d '"') \
           | sort -u)
# The first column of the ?json table; codings, REASON, LEVEL and … stand
# for any.
rows=$(awk '/^## .*\?json/ {on = 1; next} /^## / {on = 0} on' docs/monitoring.md \
       | grep '^| `' | cut -d'|' -f2 | grep -o '`[^`]*`' | tr -d '`' | tr '.' '\n' \
       | grep -vx 'gzip\|br\|zstd\|[A-Z]*\|…' | grep . | sort -u)
same "$src_json" "$rows" "a ?json field" "in docs/monitoring.md"


echo "1..$tap"
[ $fail -eq 0 ]
