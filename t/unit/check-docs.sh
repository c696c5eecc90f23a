#!/bin/sh
# Every directive in the code is documented in docs/directives.md (in
# httpd's reference format, with the context and override the code gives
# it) and listed in conf/adaptive_deflate.conf; nothing is documented
# that the code does not have; every metric family t/metrics.t finds is
# documented in docs/monitoring.md, and only those.  TAP: one result per
# directive and per metric family.
set -u
top=${srcdir:-.}
# the table's rows, and one levels directive per coding (adf_coding.h's
# ADF_CODINGS, made rows with COST_CTX by adf_config.c)
per_coding=$(sed -n 's/.*X([A-Z0-9_]*, *[a-z0-9_]*, *"\(AdaptiveDeflate[A-Za-z]*\)").*/\1/p' \
       "$top/libadf/codec/adf_coding.h")
code=$({ sed -n 's/.*AP_INIT_[A-Z0-9_]*("\(AdaptiveDeflate[A-Za-z]*\)".*/\1/p' \
       "$top/httpd/adf_config.c"; printf '%s\n' $per_coding; } | sort -u)
n=0
failed=0
# result OK|FAIL DESCRIPTION [WHY...]
result() {
    n=$((n + 1))
    if [ "$1" = OK ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        shift 2
        printf '# %s\n' "$@"
        failed=$((failed + 1))
    fi
}
[ -n "$code" ] || result FAIL "directives found in httpd/adf_config.c"
for d in $code; do
    why=""
    section=$(awk -v h="## $d" '$0 == h {on=1; next} /^## / {on=0} on' \
              "$top/docs/directives.md")
    if [ -z "$section" ]; then
        why="no section in docs/directives.md"
    fi
    for field in Description Syntax Default Context Override Status \
                 Module Compatibility; do
        if [ -n "$section" ] && ! printf '%s\n' "$section" | grep -q "^| $field |"; then
            why="$why${why:+; }no '$field' row in docs/directives.md"
        fi
    done
    # .htaccess exactly where the code allows it (DIR_CTX: FileInfo)
    ctx=$(D=$d perl -0ne 'while (/AP_INIT_\w+\(\s*"(\w+)"\s*,\s*[^,]+,\s*[^,]+,\s*(\w+)/g) {
                              print "$2\n" if $1 eq $ENV{D} }' "$top/httpd/adf_config.c")
    if printf '%s\n' $per_coding | grep -qx "$d"; then
        ctx=COST_CTX
    fi
    row=$(printf '%s\n' "$section" | grep '^| Context |')
    ovr=$(printf '%s\n' "$section" | grep '^| Override |')
    case $ctx in
    DIR_CTX) want_ht=yes want_ovr=FileInfo ;;
    *) want_ht=no want_ovr=none ;;
    esac
    has_ht=no
    case $row in *.htaccess*) has_ht=yes ;; esac
    if [ -n "$section" ] && { [ "$has_ht" != "$want_ht" ] \
           || ! printf '%s' "$ovr" | grep -Eq "^\| Override \| $want_ovr( |\|)"; }; then
        why="$why${why:+; }docs say '$row' / '$ovr'; the code's context is ${ctx:-unknown}"
    fi
    if [ -n "$section" ] && ! printf '%s\n' "$section" | grep -q '^```apache'; then
        why="$why${why:+; }no example in docs/directives.md"
    fi
    if ! grep -Eq "^[[:space:]]*#?[[:space:]]*$d( |\$)" "$top/conf/adaptive_deflate.conf"; then
        why="$why${why:+; }not in conf/adaptive_deflate.conf"
    fi
    if [ -z "$why" ]; then
        result OK "$d: documented and in the sample conf"
    else
        result FAIL "$d: documented and in the sample conf" "$why"
    fi
done
for d in $(sed -n 's/^## \(AdaptiveDeflate[A-Za-z]*\)$/\1/p' "$top/docs/directives.md"); do
    if printf '%s\n' $code | grep -qx "$d"; then
        result OK "docs/directives.md: $d is in the code"
    else
        result FAIL "docs/directives.md: $d is in the code" \
            "docs/directives.md documents $d, which the code lacks"
    fi
done
# Metric families: t/metrics.t's lists against docs/monitoring.md's table.
families=$(awk '/^my %(counters|gauges) = map/ {on=1; sub(/.*qw\(/, "")}
                on {line=$0; sub(/\).*/, "", line); print line}
                on && /\);/ {on=0}' "$top/t/metrics.t" | tr -s ' ' '\n' \
           | grep . | sort -u)
[ -n "$families" ] || result FAIL "metric families found in t/metrics.t"
documented=$(sed -n 's/^| `adaptive_deflate_\([a-z_]*\)` |.*/\1/p' \
             "$top/docs/monitoring.md" | sed 's/_total$//' | sort -u)
for f in $families; do
    if printf '%s\n' $documented | grep -qx "$f"; then
        result OK "metric $f is in docs/monitoring.md"
    else
        result FAIL "metric $f is in docs/monitoring.md"
    fi
done
for f in $documented; do
    if printf '%s\n' $families | grep -qx "$f"; then
        result OK "docs/monitoring.md: metric $f is exposed"
    else
        result FAIL "docs/monitoring.md: metric $f is exposed" \
            "docs/monitoring.md documents metric $f, which t/metrics.t does not find"
    fi
done
echo "1..$n"
[ $failed -eq 0 ]
