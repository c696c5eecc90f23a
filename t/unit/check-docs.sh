#!/bin/sh
# Every directive in the code is documented in docs/directives.md (in
# httpd's reference format) and listed in conf/adaptive_deflate.conf; and
# nothing is documented that the code does not have.
set -u
top=${srcdir:-.}
code=$(sed -n 's/.*AP_INIT_[A-Z0-9_]*("\(AdaptiveDeflate[A-Za-z]*\)".*/\1/p' \
       "$top/adf_config.c" | sort -u)
fail=0
n=0
[ -n "$code" ] || { echo "no directive found in adf_config.c"; exit 1; }
for d in $code; do
    n=$((n + 1))
    section=$(awk -v h="## $d" '$0 == h {on=1; next} /^## / {on=0} on' \
              "$top/docs/directives.md")
    if [ -z "$section" ]; then
        echo "FAIL: $d has no section in docs/directives.md"; fail=1; continue
    fi
    for field in Description Syntax Default Context Override Status \
                 Module Compatibility; do
        if ! printf '%s\n' "$section" | grep -q "^| $field |"; then
            echo "FAIL: $d: no '$field' row in docs/directives.md"; fail=1
        fi
    done
    # .htaccess exactly where the code allows it (DIR_CTX: FileInfo)
    ctx=$(D=$d perl -0ne 'while (/AP_INIT_\w+\(\s*"(\w+)"\s*,\s*[^,]+,\s*[^,]+,\s*(\w+)/g) {
                              print "$2\n" if $1 eq $ENV{D} }' "$top/adf_config.c")
    row=$(printf '%s\n' "$section" | grep '^| Context |')
    ovr=$(printf '%s\n' "$section" | grep '^| Override |')
    case $ctx in
    DIR_CTX) want_ht=yes want_ovr=FileInfo ;;
    *) want_ht=no want_ovr=none ;;
    esac
    has_ht=no
    case $row in *.htaccess*) has_ht=yes ;; esac
    if [ "$has_ht" != "$want_ht" ] || ! printf '%s' "$ovr" | grep -q "| $want_ovr |"; then
        echo "FAIL: $d: docs/directives.md says '$row' / '$ovr'; the code's context is ${ctx:-unknown}"
        fail=1
    fi
    if ! printf '%s\n' "$section" | grep -q '^```apache'; then
        echo "FAIL: $d: no example in docs/directives.md"; fail=1
    fi
    if ! grep -Eq "^[[:space:]]*#?[[:space:]]*$d( |\$)" "$top/conf/adaptive_deflate.conf"; then
        echo "FAIL: $d is not in conf/adaptive_deflate.conf"; fail=1
    fi
done
for d in $(sed -n 's/^## \(AdaptiveDeflate[A-Za-z]*\)$/\1/p' "$top/docs/directives.md"); do
    if ! printf '%s\n' $code | grep -qx "$d"; then
        echo "FAIL: docs/directives.md documents $d, which the code lacks"
        fail=1
    fi
done
# Every metric family t/metrics.t finds in the exposition (and only
# those) is documented in docs/monitoring.md.
families=$(awk '/^my %(counters|gauges) = map/ {on=1; sub(/.*qw\(/, "")}
                on {line=$0; sub(/\).*/, "", line); print line}
                on && /\);/ {on=0}' "$top/t/metrics.t" | tr -s ' ' '\n' \
           | grep . | sort -u)
[ -n "$families" ] || { echo "FAIL: no metric family in t/metrics.t"; fail=1; }
documented=$(sed -n 's/^| `adaptive_deflate_\([a-z_]*\)` |.*/\1/p' \
             "$top/docs/monitoring.md" | sed 's/_total$//' | sort -u)
for f in $families; do
    n=$((n + 1))
    printf '%s\n' $documented | grep -qx "$f" \
        || { echo "FAIL: metric $f is not in docs/monitoring.md"; fail=1; }
done
for f in $documented; do
    printf '%s\n' $families | grep -qx "$f" \
        || { echo "FAIL: docs/monitoring.md documents metric $f, which t/metrics.t does not find"; fail=1; }
done
if [ $fail -eq 0 ]; then
    echo "docs: directives documented and in the sample conf, metrics documented"
    echo "$n passed, 0 failed"
fi
exit $fail
