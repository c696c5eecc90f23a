#!/bin/sh
# Every directive in the code is documented in docs/directives.md (in
# httpd's reference format) and listed in conf/adaptive_deflate.conf; and
# nothing is documented that the code does not have.  TAP: one result per
# directive.
set -u
top=${srcdir:-.}
code=$(sed -n 's/.*AP_INIT_[A-Z0-9_]*("\(AdaptiveDeflate[A-Za-z]*\)".*/\1/p' \
       "$top/adf_config.c" | sort -u)
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
[ -n "$code" ] || result FAIL "directives found in adf_config.c"
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
echo "1..$n"
[ $failed -eq 0 ]
