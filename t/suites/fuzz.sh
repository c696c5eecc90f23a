#!/bin/sh
# CI suite: a short run of each fuzzer, one result per target.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/scripts/tap.sh"
out=$(mktemp -d /tmp/adf-fuzz.XXXXXX)
trap 'rm -rf "$out" "$tap_state"' EXIT
for t in negotiate parse load codec etag; do
    tap_check "fuzz_$t: 20000 runs without a finding" \
        env ADF_FUZZ_DIR="$out" "$top/scripts/fuzz" 20000 "$t"
done
tap_end
