# TAP from a shell script (sourced): results numbered across commands,
# the plan at the end.  The caller sets $top (the source tree).
#   tap_run NAME COMMAND...     the command's TAP merged into ours (t/lib/ADFTap.pm:
#                               no plan, a broken plan or an unexplained
#                               non-zero exit is a failure)
#   tap_trs NAME STATUS FILE.trs...   the results automake's TAP driver
#                               recorded, in a make that exited with STATUS
#   tap_check DESCRIPTION COMMAND...   one result: the command succeeds
#   tap_end                     the plan; exit 1 when anything failed
# Whatever a command writes to stderr passes through (automake's log).
tap_state=$(mktemp /tmp/adf-tap.XXXXXX)
echo "0 0" > "$tap_state"

tap_run() {
    perl -I"$top/t/lib" -MADFTap -e 'exit ADFTap::cli(@ARGV)' run "$tap_state" "$@"
}

tap_trs() {
    perl -I"$top/t/lib" -MADFTap -e 'exit ADFTap::cli(@ARGV)' trs "$tap_state" "$@"
}

tap_check() {
    tap_desc=$1
    shift
    read -r tap_n tap_failed < "$tap_state"
    tap_n=$((tap_n + 1))
    if "$@" >&2; then
        echo "ok $tap_n - $tap_desc"
    else
        echo "not ok $tap_n - $tap_desc"
        tap_failed=$((tap_failed + 1))
    fi
    echo "$tap_n $tap_failed" > "$tap_state"
}

tap_end() {
    read -r tap_n tap_failed < "$tap_state"
    rm -f "$tap_state"
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}
