#!/bin/sh
# adaptive-precompress, as TAP: siblings decode to their files and are
# fresh by the rule of adf_ident.h (S.mtime == F.mtime to the nanosecond,
# S.ctime > F.ctime); up-to-date ones are left alone, stale ones rewritten
# (same-second edits and rollbacks included), those that only changed
# before F refreshed; F's group kept; -d removes only what the tool wrote;
# names escaped; an unreadable file is one error; -n writes nothing; as
# root, a directory its owner swaps for a symbolic link moves nothing, a
# directory another user owns is done as that user, and no sibling of
# another user's is decoded; --train-dictionary writes a zstd dictionary
# that helps, reproducibly, atomically and never through a link at OUT.
# The build's codings come from configure (ADF_CODINGS, set by make
# check): gzip, and br where built (without it: refused, never written).
# Inputs are generated here.  Needs gzip, brotli, zstd, perl and getfattr/
# setfattr (Debian: attr); as root it also runs the tool as nobody.
set -u
tool=${builddir:-.}/tools/adaptive-precompress
case $tool in /*) ;; *) tool=$(pwd)/$tool ;; esac
d=$(mktemp -d /tmp/adf-pc.XXXXXX)
trap 'umount "$d/ext4" 2>/dev/null; chmod -R u+rwx "$d" 2>/dev/null; rm -rf "$d"' EXIT
n=0
failed=0
esc=$(printf '\033')

# t DESCRIPTION SHELL-TEST: one TAP line.
t() {
    n=$((n + 1))
    if eval "$2"; then
        echo "ok $n - $1"
    else
        echo "not ok $n - $1"
        diag "test: $2" "last run's stdout:" "${out-}" "stderr:" "${err-}"
        failed=$((failed + 1))
    fi
}
skip() {
    n=$((n + 1))
    echo "ok $n - $1 # SKIP $2"
}
diag() {
    printf '%s\n' "$@" | sed 's/^/# /'
}

# Deterministic text: TAG LINES.
gen() {
    awk -v tag="$1" -v n="$2" 'BEGIN { for (i = 1; i <= n; i++)
        printf "<p>%s %d: the quick brown fox %d jumps over %d lazy dogs.</p>\n",
               tag, i, (i * 7) % 13, (i * 3) % 11 }'
}
mtime() { stat -c %.9Y "$1"; }
ctime() { stat -c %.9Z "$1"; }
# Is timestamp A (sec.nsec) later than B?
later() {
    awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, "."); split(b, y, ".");
        exit !(x[1] + 0 > y[1] + 0 || (x[1] + 0 == y[1] + 0 && x[2] + 0 > y[2] + 0)) }'
}
# Is sibling S fresh for F by the rule?
fresh() {
    [ "$(mtime "$2")" = "$(mtime "$1")" ] && later "$(ctime "$2")" "$(ctime "$1")"
}
# x2: the second sibling's extension (.br), empty in a build without br;
# k: siblings per file.  ${x2:-.gz} is the last sibling written.
case " ${ADF_CODINGS:?ADF_CODINGS is not set (make check sets it)} " in
    *" br "*) x2=.br; k=2 ;;
    *) x2=""; k=1 ;;
esac
on2() {         # a test of the second sibling; none: nothing to test
    [ -z "$x2" ] || "$@"
}
decodes() {     # F: its siblings decode to F
    gzip -dc "$1.gz" 2>/dev/null | cmp -s - "$1" &&
        { [ -z "$x2" ] || brotli -dc "$1.br" 2>/dev/null | cmp -s - "$1"; }
}
# gzip and br (where built) unless a test names its codings (zstd has its
# own tests).
run() {         # run the tool: $out, $err, $rc
    case " $* " in
        *" -c "*) ;;
        *) set -- -c "gzip${x2:+,br}" "$@" ;;
    esac
    out=$("$tool" "$@" 2>"$d/stderr")
    rc=$?
    err=$(cat "$d/stderr")
}
has() { printf '%s\n' "$1" | grep -q -- "$2"; }
hasF() { printf '%s\n' "$1" | grep -qF -- "$2"; }

# ---- a first run ----------------------------------------------------------
s=$d/site
mkdir -p "$s/sub" "$s/link"
gen index 400 > "$s/index.html"
gen alice 300 > "$s/sub/alice.txt"
gen photo 100 > "$s/photo.jpeg"
gen ssi 100 > "$s/page.shtml"
gen report 100 > "$s/report.tmp-1.html"
perl -MDigest::SHA=sha256 -e '$s = "adf"; for (1 .. 63) { $s = sha256($s); print $s }' \
    > "$s/random.txt"                           # does not shrink
printf 'tiny' > "$s/tiny.css"
ln -s ../index.html "$s/link/index.html"
mkfifo "$s/fifo.js"

run "$s"
t "first run exits 0" '[ $rc -eq 0 ]'
t "summary" 'has "$out" "^4 files: $((3 * k)) siblings written, 0 refreshed, 0 up to date, $k not smaller (none kept), 0 orphans removed, 0 errors$"'
t "siblings decode to the file" 'decodes "$s/index.html" && decodes "$s/sub/alice.txt"'
t "gz level 9 (XFL 2)" '[ "$(od -An -tu1 -j8 -N1 "$s/index.html.gz" | tr -d " ")" = 2 ]'
t "siblings carry the file's mtime to the nanosecond" '[ "$(mtime "$s/index.html.gz")" = "$(mtime "$s/index.html")" ] && on2 [ "$(mtime "$s/index.html$x2")" = "$(mtime "$s/index.html")" ]'
t "siblings changed after their file (fresh by the rule)" 'fresh "$s/index.html" "$s/index.html.gz" && on2 fresh "$s/index.html" "$s/index.html$x2"'
t "jpeg skipped" '[ ! -e "$s/photo.jpeg.gz" ]'
t "shtml not compressed by default (SSI source)" '[ ! -e "$s/page.shtml.gz" ] && [ ! -e "$s/page.shtml.br" ]'
t "shtml not in the default list" '! "$tool" --help | grep -q shtml'
t "a user file named *.tmp-*.html gets siblings" 'decodes "$s/report.tmp-1.html"'
t "short file skipped" '[ ! -e "$s/tiny.css.gz" ]'
t "incompressible: no sibling" '[ ! -e "$s/random.txt.gz" ] && [ ! -e "$s/random.txt.br" ]'
t "symlink not followed" '[ ! -e "$s/link/index.html.gz" ]'
t "fifo skipped" '[ ! -e "$s/fifo.js.gz" ]'
t "no temporary file left" '[ -z "$(find "$s" -name ".*.adaptive-precompress-*")" ]'

# ---- the marker: the filesystem must have user xattrs ---------------------
if ! command -v setfattr >/dev/null || ! command -v getfattr >/dev/null; then
    t "setfattr/getfattr available (Debian: attr), needed for the -d tests" false
fi
: > "$d/xattr-probe"
t "user extended attributes work in $d (needed by -d)" \
  'setfattr -n user.adf-probe -v 1 "$d/xattr-probe" 2>/dev/null'
marker() { getfattr --only-values -n user.adaptive_deflate "$1" 2>/dev/null; }
# F's identity as the module checks it: inode, size, mtime, ctime.
# the mark F's sibling S should carry: F's identity, S's SHA-256
ident() { echo "3 ino=$(stat -c %i "$1") size=$(stat -c %s "$1") mtime=$(mtime "$1") ctime=$(ctime "$1") sha256=$(sha256sum < "$2" | cut -d' ' -f1)"; }
t "siblings marked with their file's identity" '[ "$(marker "$s/index.html.gz")" = "$(ident "$s/index.html" "$s/index.html.gz")" ] && on2 [ -n "$(marker "$s/index.html$x2")" ]'
t "no warning on a filesystem with xattrs" '[ -z "$err" ]'

# ---- up to date, stale ----------------------------------------------------
ino=$(stat -c %i "$s/index.html.gz")
cz=$(ctime "$s/index.html.gz")
run "$s"
t "second run: all up to date" 'has "$out" "^4 files: 0 siblings written" && has "$out" " $((3 * k)) up to date"'
t "up-to-date sibling untouched" '[ "$(stat -c %i "$s/index.html.gz")" = "$ino" ] && [ "$(ctime "$s/index.html.gz")" = "$cz" ]'

f=$s/index.html
gen changed 10 >> "$f"
touch -d "@$(( $(stat -c %Y "$f") + 2 ))" "$f"
run -q "$s"
t "stale siblings rewritten" 'decodes "$f" && fresh "$f" "$f.gz" && fresh "$f" "$f${x2:-.gz}"'

# Each case below in a directory of its own, one file F, its siblings
# made by a first run with F's mtime set to a known nanosecond.
setup() {
    mkdir "$d/$1"
    f=$d/$1/page.html
    gen "$1" 300 > "$f"
    touch -d "$2" "$f"
    run -q "$d/$1"
}
# Same second: F edited after the run, its new mtime in the same second.
setup same @1700000000.100000000
gen same-second 10 >> "$f"
touch -d @1700000000.700000000 "$f"
run "$d/same"
t "edit in the same second: rewritten" 'decodes "$f" && has "$out" "$k siblings written" && fresh "$f" "$f.gz"'
# An edit that keeps F's mtime to the nanosecond (only F's ctime moves).
setup kept @1700000000.700000000
gen kept-mtime 10 >> "$f"
touch -d @1700000000.700000000 "$f"
run "$d/kept"
t "edit keeping the exact mtime: rewritten, not refreshed" 'decodes "$f" && has "$out" "$k siblings written, 0 refreshed" && fresh "$f" "$f${x2:-.gz}"'
# Rollback: cp -p of an older version over F.
setup rollback @1700000000.700000000
cp -p "$f" "$d/v1"
gen v2 10 >> "$f"
touch -d @1700000100 "$f"
run -q "$d/rollback"
cp -p "$d/v1" "$f"
run "$d/rollback"
t "rollback (cp -p of an older copy): rewritten" 'decodes "$f" && [ "$(mtime "$f.gz")" = 1700000000.700000000 ] && fresh "$f" "$f.gz" && fresh "$f" "$f${x2:-.gz}"'

# ---- refresh --------------------------------------------------------------
# F copied after its siblings (cp -a of a tree, in directory order): same
# mtime, but F's inode changed last.
setup refresh @1700000000.300000000
cp -p "$f" "$d/copy" && mv "$d/copy" "$f"
ino=$(stat -c %i "$f.gz")
cz=$(ctime "$f.gz")
run -n "$d/refresh"
t "-n: would refresh" 'has "$out" "would refresh $k," && hasF "$out" "would refresh $f.gz"'
t "-n: nothing touched" '[ "$(ctime "$f.gz")" = "$cz" ]'
run "$d/refresh"
t "copied after its siblings: refreshed, not rewritten" 'has "$out" "0 siblings written, $k refreshed" && [ "$(stat -c %i "$f.gz")" = "$ino" ]'
t "refreshed siblings are fresh and still decode" 'fresh "$f" "$f.gz" && fresh "$f" "$f${x2:-.gz}" && decodes "$f"'
# A sibling with F's mtime that is not F's bytes is rewritten, not refreshed.
[ -z "$x2" ] || { head -c 100 "$f$x2" > "$d/trunc" && cat "$d/trunc" > "$f$x2"; }
printf 'junk' >> "$f.gz"
touch -d "@$(mtime "$f")" "$f.gz" ${x2:+"$f$x2"}
chmod 644 "$f"
run "$d/refresh"
t "truncated or trailing-junk sibling with F's mtime: rewritten" 'has "$out" "$k siblings written, 0 refreshed" && decodes "$f"'

# A sibling written over in place (inode and mark kept) with F's mtime
# put back, as brotli's command does: the module cannot tell per request,
# so the tool checks the bytes against the mark's digest.  Other bytes
# with F's mtime: rewritten; F's bytes coded otherwise: re-marked, with
# the new bytes' digest.
setup inplace @1700000000
gen other 50 | gzip -9 > "$d/other.gz"
cat "$d/other.gz" > "$f.gz"
touch -d "@$(mtime "$f")" "$f.gz"
run "$d/inplace"
t "rewritten in place, F's mtime put back: rewritten" 'has "$out" "1 siblings written, 0 refreshed, $((k - 1)) up to date" && decodes "$f" && [ "$(marker "$f.gz")" = "$(ident "$f" "$f.gz")" ]'
run "$d/inplace"
ino=$(stat -c %i "$f.gz")
gzip -1 -c "$f" > "$d/fast.gz"
cat "$d/fast.gz" > "$f.gz"
touch -d "@$(mtime "$f")" "$f.gz"
run "$d/inplace"
t "F's bytes coded again in place, F's mtime put back: re-marked" 'has "$out" "0 siblings written, 1 refreshed, $((k - 1)) up to date" && [ "$(stat -c %i "$f.gz")" = "$ino" ] && [ "$(marker "$f.gz")" = "$(ident "$f" "$f.gz")" ] && decodes "$f"'
run "$d/inplace"
t "and then up to date" 'has "$out" "0 siblings written, 0 refreshed, $k up to date"'

# A sibling whose mark names another version of F (its inode touched
# since, so the times alone would pass): the module would not serve it;
# its bytes are F's here, so the tool re-marks it rather than compress.
setup marked @1700000000.500000000
setfattr -n user.adaptive_deflate -v "2 ino=$(stat -c %i "$f") size=1 mtime=1700000000.500000000 ctime=$(ctime "$f")" "$f.gz"
run "$d/marked"
t "marked sibling naming another version of F: verified, re-marked" 'has "$out" "0 siblings written, 1 refreshed, $((k - 1)) up to date" && [ "$(marker "$f.gz")" = "$(ident "$f" "$f.gz")" ] && decodes "$f"'

# ---- group ----------------------------------------------------------------
# As root, a group like www-data; otherwise one of our supplementary groups.
grp=
if [ "$(id -u)" = 0 ]; then
    for g in www-data nogroup; do
        getent group "$g" >/dev/null && { grp=$g; break; }
    done
else
    for g in $(id -G); do
        [ "$g" != "$(id -g)" ] && { grp=$(getent group "$g" | cut -d: -f1); break; }
    done
fi
if [ -n "$grp" ]; then
    mkdir "$d/g"
    gen group 200 > "$d/g/secret.html"
    chgrp "$grp" "$d/g/secret.html"
    chmod 640 "$d/g/secret.html"
    run "$d/g"
    t "sibling keeps its file's group ($grp) and mode" '[ "$(stat -c %G:%a "$d/g/secret.html.gz")" = "$grp:640" ] && [ "$(stat -c %G:%a "$d/g/secret.html${x2:-.gz}")" = "$grp:640" ] && [ -z "$err" ]'
else
    skip "sibling keeps its file's group and mode" "not root, and no supplementary group"
fi

# ---- orphans --------------------------------------------------------------
o=$d/orphans
mkdir "$o"
gen x 200 > "$o/x.csv"
run -q "$o"
rm "$o/x.csv"
gen dump 200 | gzip -9 > "$o/dump.csv.gz"      # a download, not a sibling
run -q "$o"
t "orphans kept without -d" '[ -e "$o/x.csv.gz" ] && [ -e "$o/x.csv${x2:-.gz}" ]'
run -n -d "$o"
t "-n -d: would remove the marked orphans only" 'hasF "$out" "would remove $o/x.csv.gz" && hasF "$out" "would remove $o/x.csv${x2:-.gz}" && ! hasF "$out" "dump.csv.gz" && has "$out" "would remove $k orphans"'
t "-n -d: nothing removed" '[ -e "$o/x.csv.gz" ] && [ -e "$o/x.csv${x2:-.gz}" ]'
run -d "$o"
t "-d removes a marked orphan" '[ ! -e "$o/x.csv.gz" ] && [ ! -e "$o/x.csv.br" ]'
t "-d keeps a foreign .gz with no file (dump.csv.gz)" '[ -e "$o/dump.csv.gz" ] && gzip -t "$o/dump.csv.gz"'
t "summary counts removed and kept orphans" 'has "$out" "$k orphans removed" && has "$out" "1 orphaned siblings kept"'

# ---- names ----------------------------------------------------------------
e=$d/esc
mkdir "$e"
evil=$(printf 'x\033[31mred\nline\\.html')
gen evil 100 > "$e/$evil"
run -n "$e"
t "-n: control characters and backslash escaped" 'hasF "$out" "would write $e/x\\x1b[31mred\\x0aline\\\\.html.gz" && [ "$(printf "%s\n" "$out" | grep -c "^would write")" = $k ]'
t "-n: no raw escape in output" '! printf "%s\n" "$out" "$err" | grep -q "$esc"'
if command -v script >/dev/null; then
    script -qec "'$tool' -n '$e'" /dev/null > "$d/tty" 2>&1
    t "progress line on a tty: name escaped" '! sed "s/\r${esc}\[K//g" "$d/tty" | grep -q "$esc" && grep -qF "x\\x1b[31mred" "$d/tty"'
else
    skip "progress line on a tty: name escaped" "no script(1)"
fi

# ---- -n -------------------------------------------------------------------
nd=$d/dry
mkdir "$nd"
gen a 200 > "$nd/a.html"
gen b 200 > "$nd/b.css"
before=$(cd "$nd" && ls -la --time-style=full-iso)
run -n "$nd"
t "-n summary: would write the siblings" 'has "$out" "^2 files: would write $((2 * k)) siblings, would refresh 0, 0 up to date" && ! has "$out" "siblings written"'
t "-n writes nothing" '[ "$(cd "$nd" && ls -la --time-style=full-iso)" = "$before" ]'

# ---- as another user: unreadable file, unwritable directory, group that --
# ---- cannot be kept -------------------------------------------------------
# As root, the tool runs as nobody (as root it could read anything).
runtool=$tool
if [ "$(id -u)" = 0 ]; then
    chmod 755 "$d"
    if ! setpriv --reuid=nobody --regid=nogroup --clear-groups \
         test -x "$tool"; then
        cp "$tool" "$d/adaptive-precompress"
        runtool=$d/adaptive-precompress
    fi
fi
as_other() {    # like run, as nobody when root
    if [ "$(id -u)" = 0 ]; then
        out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups \
              "$runtool" "$@" 2>"$d/stderr")
    else
        out=$("$tool" "$@" 2>"$d/stderr")
    fi
    rc=$?
    err=$(cat "$d/stderr")
}
u=$d/unreadable
mkdir "$u"
gen ok 200 > "$u/ok.html"
bad=$(printf 'sec\033ret.html')
gen secret 200 > "$u/$bad"
if [ "$(id -u)" = 0 ]; then
    # A directory of nobody's: only the read fails.
    chown nobody "$u"
    chgrp nogroup "$u/ok.html"
    chmod 600 "$u/$bad"
    if [ -n "$grp" ] && [ "$grp" != nogroup ]; then
        gen grp1 200 > "$u/grp1.html"
        gen grp2 200 > "$u/grp2.html"
        chgrp "$grp" "$u/grp1.html" "$u/grp2.html"
    fi
else
    chmod 000 "$u/$bad"
fi
as_other "$u"
t "unreadable file: exit 1" '[ $rc -eq 1 ]'
t "unreadable file reported once, counted once" '[ "$(printf "%s\n" "$err" | grep -c "sec.*ret")" = 1 ] && has "$out" " 1 errors$"'
t "error message names the file, escaped" 'hasF "$err" "$u/sec\\x1bret.html: cannot read: Permission denied" && ! printf "%s\n" "$err" | grep -q "$esc"'
t "readable file beside it still done" 'decodes "$u/ok.html"'
if [ "$(id -u)" = 0 ] && [ -n "$grp" ] && [ "$grp" != nogroup ]; then
    t "group that cannot be kept: one warning" '[ "$(printf "%s\n" "$err" | grep -c "warning: .*group")" = 1 ]'
    t "... and no group permissions on those siblings" '[ "$(stat -c %a "$u/grp1.html.gz")" = 604 ] && [ "$(stat -c %a "$u/grp2.html${x2:-.gz}")" = 604 ] && decodes "$u/grp1.html"'
else
    skip "group that cannot be kept: one warning" "needs root and a www-data group"
    skip "... and no group permissions on those siblings" "needs root"
fi
ro=$d/ro
mkdir "$ro"
gen ro 200 > "$ro/page.html"
[ "$(id -u)" = 0 ] || chmod a-w "$ro"
as_other "$ro"
t "unwritable directory: exit 1, one error" '[ $rc -eq 1 ] && [ "$(printf "%s\n" "$err" | grep -c "page.html")" = 1 ]'
t "unwritable directory: nothing written" '[ "$(ls -A "$ro")" = page.html ]'

# ---- as root on a tree a user controls: a directory swapped for a link ---
# An attacker running as the tree's owner (nobody) exchanges a directory
# of the tree with a symbolic link to a root-owned directory in a tight
# loop (t/unit/swap-race, renameat2 RENAME_EXCHANGE) while the tool runs
# as root.  Nothing may be created, written or chowned in the target
# (inotify), and the swap must not even disturb the tool: every run exits
# 0 without a message.  Two trees: one nobody owns, and a world-writable
# one of root's whose root-owned subdirectory is swapped.  The tool makes
# every operation relative to a directory descriptor: one that went by
# paths after its walk was caught in about half of such runs (it wrote
# its temporaries, and renamed siblings chowned to nobody, into the
# target).  And the swaps must not stop the tool for good: it writes the
# siblings in some runs.  How many depends on its speed against the
# attacker's loop: 26-31 of 40 runs here, 9-25 under ASan (about three
# times slower): one run in eight is asked.
race_runs=40
race() {        # TREE-DESCRIPTION TREE: the runs, then their TAP lines
    rt=$2
    rm -rf "$d/target"
    mkdir "$d/target"
    caught=0 events=0 swaps=0 noisy=0 done=0 i=0
    while [ $i -lt $race_runs ]; do
        i=$((i + 1))
        rm -f "$rt/a/evil.txt".* "$rt/a"/.evil.txt*
        "$race" nobody "$rt/a" "$rt/l" "$d/target" "$tool" -q "$rt" \
            > "$d/race.out" 2> "$d/race.err"
        rc=$?
        [ $rc -ne 99 ] || break
        sw=$(sed -n 's/^swaps //p' "$d/race.out")
        ev=$(grep -vc '^swaps ' "$d/race.out")
        swaps=$((swaps + ${sw:-0}))
        events=$((events + ev))
        [ "$ev" = 0 ] || { caught=$((caught + 1)); cp "$d/race.out" "$d/race.caught"; }
        [ $rc = 0 ] && [ ! -s "$d/race.err" ] || { noisy=$((noisy + 1)); cp "$d/race.err" "$d/race.noisy"; }
        [ -e "$rt/a/evil.txt.gz" ] && done=$((done + 1))
    done
    out="$(cat "$d/race.out" "$d/race.caught" 2>/dev/null)"
    err="$(cat "$d/race.err" "$d/race.noisy" 2>/dev/null)"
    diag "$1: $i runs, $swaps swaps, caught in $caught runs ($events events in the target), $noisy runs with a message, siblings written in $done runs"
    t "$1: the attacker swapped in every run" '[ $rc -ne 99 ] && [ $swaps -ge $((race_runs * 10)) ]'
    t "$1: nothing created, written or chowned in the target in $race_runs runs" '[ $caught = 0 ] && [ -z "$(ls -A "$d/target")" ]'
    t "$1: every run exits 0 without a message" '[ $noisy = 0 ]'
    t "$1: the siblings written in the swapped directory" '[ $done -ge $((race_runs / 8)) ]'
}
race=${builddir:-.}/t/unit/swap-race
if [ "$(id -u)" = 0 ]; then
    for tree in user root; do
        rt=$d/race-$tree
        mkdir -p "$rt/a"
        gen race 40 > "$rt/a/evil.txt"
        ln -s "$d/target" "$rt/l"
    done
    chown -R -h nobody:nogroup "$d/race-user"
    chown nobody:nogroup "$d/race-root/a/evil.txt"
    chmod 777 "$d/race-root"
    race "race, nobody's tree" "$d/race-user"
    race "race, root's world-writable tree" "$d/race-root"
else
    skip "race: a directory swapped for a link while root runs the tool" "needs root"
fi

# ---- as root: another user's directory is done as that user ---------------
if [ "$(id -u)" = 0 ]; then
    # A file of root's that nobody cannot read, in nobody's directory: as
    # nobody, the tool cannot read it either.
    o=$d/owned
    mkdir "$o"
    gen mine 200 > "$o/mine.html"
    chmod 600 "$o/mine.html"
    gen theirs 200 > "$o/theirs.html"
    chown nobody:nogroup "$o" "$o/theirs.html"
    run "$o"
    t "as root in nobody's directory: works as nobody (root's 0600 file unread, one error)" '[ $rc -eq 1 ] && hasF "$err" "$o/mine.html: cannot read: Permission denied" && has "$out" " 1 errors$" && [ -z "$(ls "$o" | grep "^mine.html.")" ]'
    t "... nobody's file done, its siblings nobody's" 'decodes "$o/theirs.html" && [ "$(stat -c %U "$o/theirs.html.gz")" = nobody ]'
    # A uid without an account: its directory's group.
    o=$d/noaccount
    mkdir "$o"
    gen orphan-uid 200 > "$o/page.html"
    chown -R 4242:4242 "$o"
    run "$o"
    t "as root in the directory of a uid without an account: done as it" '[ $rc -eq 0 ] && decodes "$o/page.html" && [ "$(stat -c %u:%g "$o/page.html.gz")" = 4242:4242 ]'
    # Root decodes no bytes another user could have written: a sibling
    # of theirs holding F's bytes is written anew, not refreshed.
    o=$d/foreign
    mkdir "$o"
    gen foreign 200 > "$o/page.html"
    gzip -9 -c "$o/page.html" > "$o/page.html.gz"
    chown nobody "$o/page.html.gz"
    run -c gzip "$o"
    t "as root, a sibling another user owns: rewritten, not decoded" 'has "$out" "1 siblings written, 0 refreshed" && [ "$(stat -c %U "$o/page.html.gz")" = root ] && [ "$(marker "$o/page.html.gz")" = "$(ident "$o/page.html" "$o/page.html.gz")" ]'
else
    skip "as root: another user's directory is done as that user" "needs root"
fi

# ---- zstd -----------------------------------------------------------------
mkdir "$d/zst"
gen zst 300 > "$d/zst/page.html"
run -c zstd "$d/zst"
case " $ADF_CODINGS " in *" zstd "*) zstd=yes ;; *) zstd=no ;; esac
if [ $zstd = no ]; then
    t "without zstd: -c zstd refused, saying so" '[ $rc -eq 2 ] && hasF "$err" "unavailable coding '\''zstd'\''"'
    t "without zstd: nothing written" '[ "$(ls "$d/zst")" = page.html ]'
else
    t "zstd siblings: written, decode, marked" '[ $rc -eq 0 ] && zstd -q -dc "$d/zst/page.html.zst" | cmp -s - "$d/zst/page.html" && [ "$(marker "$d/zst/page.html.zst")" = "$(ident "$d/zst/page.html" "$d/zst/page.html.zst")" ] && [ ! -e "$d/zst/page.html.gz" ]'
    rm "$d/zst/page.html"
    run -c zstd -d "$d/zst"
    t "zstd: -d removes a marked orphan" '[ ! -e "$d/zst/page.html.zst" ]'
fi

# ---- a filesystem of whole seconds: F is read once it is settled ------------
# ext4 with 128-byte inodes keeps whole seconds: F written at the start of
# a second and rewritten in place (same size) within it keeps its whole
# identity.  The tool reads F only once the filesystem's clock is past
# F's ctime by the grain (adf_ident_settled), so its sibling holds the
# bytes F ends with, not the first ones under the same identity.
if [ "$(id -u)" = 0 ]; then
    mkdir "$d/ext4"
    if truncate -s 8M "$d/ext4.img" && mkfs.ext4 -q -F -I 128 "$d/ext4.img" \
            2>/dev/null && mount -o loop "$d/ext4.img" "$d/ext4"; then
        gen one 300 > "$d/v1"
        gen two 300 > "$d/v2"
        perl -MTime::HiRes=time,sleep -e 'sleep(1 - (time - int time) + 0.02)'
        cp "$d/v1" "$d/ext4/a.html"
        (sleep 0.4; cat "$d/v2" 1<> "$d/ext4/a.html") &
        run -c gzip "$d/ext4"
        wait
        t "whole seconds: the sibling holds what F ends with, written in place in its second" \
            '[ $rc -eq 0 ] && gzip -dc "$d/ext4/a.html.gz" | cmp -s - "$d/ext4/a.html" && cmp -s "$d/ext4/a.html" "$d/v2"'
        umount "$d/ext4"
    else
        t "an ext4 image with 128-byte inodes (mkfs.ext4, a loop mount)" false
    fi
else
    t "whole seconds: needs root (a loop mount; CI runs as root)" false
fi

# ---- --train-dictionary ---------------------------------------------------
# A zstd dictionary trained on 40 pages made from one template (a few words
# vary), tried on a page held out of the training set.
tr=$d/train
mkdir -p "$tr/site/shop" "$tr/out" "$tr/empty" "$tr/few"
page() {        # WORD N: a page of the template
    cat <<PAGE
<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>$1 - item $2 - Example Shop</title>
<link rel="stylesheet" href="/static/css/main.css">
<script src="/static/js/app.js" defer></script></head>
<body><header class="site-header"><nav class="main-nav"><ul>
<li><a href="/">Home</a></li><li><a href="/products">Products</a></li>
<li><a href="/about">About us</a></li><li><a href="/contact">Contact</a></li>
</ul></nav></header>
<main class="content"><h1>The $1 collection, item $2</h1>
<p>Our $1 products are made with care: every item in the $1 range is
checked before it ships, and returns are free for thirty days.</p>
<div class="price-box"><span class="price">$(($2 * 3)).99 EUR</span>
<button class="add-to-cart" data-sku="SKU-$2">Add to cart</button></div></main>
<footer class="site-footer"><p>Copyright 2026 Example Shop. All rights
reserved.</p><p><a href="/privacy">Privacy policy</a> |
<a href="/terms">Terms of service</a></p></footer></body></html>
PAGE
}
i=0
for w in amber basil cedar dune ember fern garnet hazel iris jade kelp \
         lotus maple nutmeg olive pine quartz reed sage teak; do
    for sub in . shop; do
        i=$((i + 1))
        page "$w" $i > "$tr/site/$sub/page$i.html"
    done
done
page zephyr 77 > "$tr/held-out.html"
train() {       # run the tool as given (no -c): $out, $err, $rc
    out=$("$tool" "$@" 2>"$d/stderr")
    rc=$?
    err=$(cat "$d/stderr")
}
if [ $zstd = yes ]; then
    train --train-dictionary "$tr/out/site.dict" --dictionary-size 16k "$tr/site"
    t "--train-dictionary: exit 0" '[ $rc -eq 0 ] && [ -z "$err" ]'
    t "--train-dictionary: the dictionary, 16k at most and not trivial" '[ -f "$tr/out/site.dict" ] && sz=$(stat -c %s "$tr/out/site.dict") && [ "$sz" -le 16384 ] && [ "$sz" -ge 1024 ]'
    t "--train-dictionary: mode 0644" '[ "$(stat -c %a "$tr/out/site.dict")" = 644 ]'
    t "--train-dictionary: one line: size, files and bytes sampled, SHA-256" 'hasF "$out" "wrote $tr/out/site.dict: $(stat -c %s "$tr/out/site.dict")-byte zstd dictionary from 40 files (" && hasF "$out" "sha256 $(sha256sum < "$tr/out/site.dict" | cut -d" " -f1)" && [ "$(printf "%s\n" "$out" | wc -l)" = 1 ]'
    t "--train-dictionary: no sibling, no temporary file left" '[ -z "$(find "$tr/site" "$tr/out" -name "*.gz" -o -name "*.zst" -o -name ".*adaptive-precompress-*")" ]'
    plain=$(zstd -19 -q -c "$tr/held-out.html" | wc -c)
    withd=$(zstd -19 -q -c -D "$tr/out/site.dict" "$tr/held-out.html" | wc -c)
    diag "held-out page: $(wc -c < "$tr/held-out.html") bytes, zstd -19 $plain, with the dictionary $withd"
    t "the dictionary helps: a held-out page compresses smaller with it" '[ "$withd" -lt "$plain" ] && zstd -19 -q -c -D "$tr/out/site.dict" "$tr/held-out.html" | zstd -q -dc -D "$tr/out/site.dict" | cmp -s - "$tr/held-out.html"'
    train -q --train-dictionary "$tr/out/again.dict" --dictionary-size 16k "$tr/site"
    t "reproducible: a second run gives the same bytes" '[ $rc -eq 0 ] && [ -z "$out" ] && cmp -s "$tr/out/site.dict" "$tr/out/again.dict"'
    # The sample's cap: 100 x the size; 40 pages of about 1.1 KB exceed
    # 100 x 256 bytes.
    train --train-dictionary "$tr/out/small.dict" --dictionary-size 256 "$tr/site"
    sampled=$(printf '%s\n' "$out" | sed -n 's/.* files (\([0-9]*\) bytes sampled).*/\1/p')
    t "--dictionary-size 256: the sample capped at 100 x 256 bytes" '[ $rc -eq 0 ] && [ "$(stat -c %s "$tr/out/small.dict")" -le 256 ] && [ -n "$sampled" ] && [ "$sampled" -le 25600 ] && [ "$sampled" -ge 12800 ]'
    for bad in 255 5m 12x; do
        train --train-dictionary "$tr/out/bad.dict" --dictionary-size $bad "$tr/site"
        t "--dictionary-size $bad refused, naming the option" '[ $rc -eq 2 ] && hasF "$err" "--dictionary-size" && [ ! -e "$tr/out/bad.dict" ]'
    done
    train --dictionary-size 1k "$tr/site"
    t "--dictionary-size without --train-dictionary refused" '[ $rc -eq 2 ]'
    train --train-dictionary "$tr/out/bad.dict" -c zstd "$tr/site"
    t "--train-dictionary with -c refused" '[ $rc -eq 2 ] && [ ! -e "$tr/out/bad.dict" ]'
    train --train-dictionary "$tr/out/empty.dict" "$tr/empty"
    t "no file to train on: exit 1, saying so, nothing written" '[ $rc -eq 1 ] && hasF "$err" "no file to train on" && [ ! -e "$tr/out/empty.dict" ] && [ -z "$(ls -A "$tr/out" | grep adaptive-precompress)" ]'
    page one 1 > "$tr/few/one.html"
    page two 2 > "$tr/few/two.html"
    train --train-dictionary "$tr/out/few.dict" "$tr/few"
    t "too few files for zstd: exit 1, zstd's error named, nothing written" '[ $rc -eq 1 ] && hasF "$err" "zstd could not train a dictionary on 2 files" && [ ! -e "$tr/out/few.dict" ]'
    # OUT a symbolic link: replaced, the file it points to untouched.
    printf 'not a dictionary\n' > "$tr/victim"
    cp -p "$tr/victim" "$tr/victim.orig"
    ln -s "$tr/victim" "$tr/out/link.dict"
    train --train-dictionary "$tr/out/link.dict" --dictionary-size 16k "$tr/site"
    t "OUT a symbolic link: the file it points to not modified" '[ $rc -eq 0 ] && cmp -s "$tr/victim" "$tr/victim.orig" && [ "$(mtime "$tr/victim")" = "$(mtime "$tr/victim.orig")" ]'
    t "OUT a symbolic link: replaced by the dictionary" '[ ! -L "$tr/out/link.dict" ] && cmp -s "$tr/out/link.dict" "$tr/out/site.dict"'
    train -n --train-dictionary "$tr/out/dry.dict" --dictionary-size 16k "$tr/site"
    t "-n: would write, writes nothing" '[ $rc -eq 0 ] && hasF "$out" "would write $tr/out/dry.dict" && [ ! -e "$tr/out/dry.dict" ]'
    if [ "$(id -u)" = 0 ]; then
        # Another user's tree is read as that user, in a child that sends
        # its samples back: the same dictionary as from root's own tree.
        cp -a "$tr/site" "$tr/theirs"
        chown -R nobody:nogroup "$tr/theirs/shop"
        train --train-dictionary "$tr/out/theirs.dict" --dictionary-size 16k "$tr/theirs"
        t "as root, a subtree nobody owns: read as nobody, the same dictionary" '[ $rc -eq 0 ] && cmp -s "$tr/out/theirs.dict" "$tr/out/site.dict"'
        train --train-dictionary "$tr/out/theirs256.dict" --dictionary-size 256 "$tr/theirs"
        t "... and the same capped sample" '[ $rc -eq 0 ] && cmp -s "$tr/out/theirs256.dict" "$tr/out/small.dict"'
        cp "$tr/site/page1.html" "$tr/theirs/shop/roots.html"
        chmod 600 "$tr/theirs/shop/roots.html"
        train --train-dictionary "$tr/out/leak.dict" "$tr/theirs"
        t "as root, a file nobody cannot read in nobody's tree: an error, nothing written" '[ $rc -eq 1 ] && hasF "$err" "roots.html: cannot read: Permission denied" && [ ! -e "$tr/out/leak.dict" ]'
    else
        skip "as root, a subtree nobody owns: read as nobody" "needs root"
    fi
else
    train --train-dictionary "$tr/out/site.dict" "$tr/site"
    t "without zstd: --train-dictionary refused, saying so" '[ $rc -eq 2 ] && hasF "$err" "this build has no zstd" && [ ! -e "$tr/out/site.dict" ]'
fi

# ---- usage ----------------------------------------------------------------
run --min-length=abc "$s"
t "bad option refused" '[ $rc -eq 2 ]'
run -c deflate "$s"
t "bad coding refused" '[ $rc -eq 2 ]'
ln -s "$s" "$d/site-link"
run "$d/site-link"
t "DIR a symbolic link: not followed, saying so" '[ $rc -eq 1 ] && hasF "$err" "$d/site-link: a symbolic link, not followed: give the directory it points to" && has "$out" "^0 files"'
run -n -c br "$s"
if [ -n "$x2" ]; then
    t "-c br accepted" '[ $rc -eq 0 ]'
else
    t "without br: -c br refused, saying so" '[ $rc -eq 2 ] && hasF "$err" "unavailable coding '\''br'\''"'
fi

echo "1..$n"
[ $failed -eq 0 ]
