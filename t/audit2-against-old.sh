#!/bin/sh
# Run this branch's Apache::Test files against another build of the module
# (the audit table in t/audit-findings.md: 097abf0).  Not part of CI.
#   t/audit2-against-old.sh OLD_MODULE_SO [TEST_FILE...]
# e.g.  git worktree add /tmp/old 097abf0 && (cd /tmp/old && scripts/build)
#       ADF_TEST_PORT=9500 t/audit2-against-old.sh /tmp/old/.libs/mod_adaptive_deflate.so -verbose t/security.t
# Scratch servers of the tests listen on ADF_SCRATCH_PORT (default: the
# suite's port + 50).  Compatibility edits in a scratch copy, each only
# where the old module cannot start or the file cannot run at all:
#  - zstd is not a coding there (AdaptiveDeflateEncodings br zstd gzip);
#  - ADF_OLD_QUOTE=0: the load file's name without the quote and backslash
#    (item 13: the old status JSON breaks on them, and every file that
#    waits for an idle signal dies in idle(); run with ADF_OLD_QUOTE=1 to
#    see that);
#  - signal.t without its first two blocks (they read sampler_pid, which
#    the old status lacks);
#  - signalstart.t: signal.t's last block alone.
set -eu
old=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
w=$(mktemp -d /tmp/adf-old.XXXXXX)
trap 'rm -rf "$w"' EXIT INT TERM
cp -R "$top/scripts" "$top/t" "$w/"
rm -rf "$w"/t/logs-*
sed -i 's/AdaptiveDeflateEncodings br zstd gzip/AdaptiveDeflateEncodings br gzip/' \
    "$w/t/conf/extra.conf.in"
if [ "${ADF_OLD_QUOTE:-0}" = 0 ]; then
    sed -i 's|file:@ServerRoot@/logs/load\\"q\\x|file:@ServerRoot@/logs/loadqx|' \
        "$w/t/conf/extra.conf.in"
    sed -i "s|sub load_file { serverroot() . '/logs/load\"q\\\\\\\\x' }|sub load_file { serverroot() . '/logs/loadqx' }|" \
        "$w/t/lib/ADFTest.pm"
fi
perl -0pi -e 's/plan tests => 28;/plan tests => 21;/;
              s/\n# ---- a spike, then idle.*?\n(# ---- the source cannot be read)/\n$1/s' \
    "$w/t/signal.t"
perl -0ne 'print $1 if /\A(.*?plan tests => )/s; print "3;\nmy \$page = slurp(docroot() . \"/index.html\");\nmy \$r;\n";
           print $1 if /\n(# ---- a source the children cannot read.*)\z/s' \
    "$top/t/signal.t" > "$w/t/signalstart.t"
cd "$w"
ADF_MODULE=$old ADF_CORPUS=${ADF_CORPUS:-$top/../shared/corpus} \
    scripts/run-httpd-tests "$@"
