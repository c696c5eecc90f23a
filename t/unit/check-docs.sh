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
if [ $fail -eq 0 ]; then
    echo "docs: $n directives documented and in the sample conf"
    echo "$n passed, 0 failed"
fi
exit $fail
