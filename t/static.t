# Precompressed siblings: served when fresh and accepted, through the
# static path (own length, ETag, 304, Range, HEAD, Vary whatever
# mod_headers sets), never around symlink rules, never when stale (a
# same-second edit, a rollback, no mark, an old sibling whose inode was
# touched) or not a readable file; adaptive-precompress's siblings are
# the ones the module calls fresh.  (Access rules and filters:
# security.t.)  Configuration: t/conf/features/static.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Path qw(make_path);
use POSIX qw(mkfifo);
use Time::HiRes qw(sleep);
use Socket qw(SOL_SOCKET SO_RCVBUF);
use Apache::TestRequest ();
use LWP::UserAgent ();
use Digest::SHA qw(sha256_hex);
use ADFTest;

plan tests => 119;

# Idle: on the fly at the top of the range (the tool's check below tells
# a stale sibling by its reason, max or target).
idle();

my $root = docroot();
my $dir = "$root/static";
make_path(map { "$dir/$_" } qw(links ownerlinks fresh tool vary varyoff));
my $orig = slurp("$root/index.html");
my $old = time - 1000;
# Decoys: siblings that must not be served decode to this marker.
my $decoy = "DECOY sibling\n" x 40;

for my $name (qw(page index gzonly stale dir fifo unreadable sameedit
                 rollback unmarked chmodded foreign)) {
    spew("$dir/$name.html", $orig);
    chmod 0644, "$dir/$name.html";
    utime $old, $old, "$dir/$name.html";
}
make_sibling("$dir/page.html", 'gzip');
make_sibling("$dir/page.html", 'br');
make_sibling("$dir/index.html", 'br');
make_sibling("$dir/gzonly.html", 'gzip');
# Each decoy below is stopped by one rule only (the others would pass).
# A mark that names another version of F.
compress_to('gzip', $decoy, "$dir/stale.html.gz");
system('touch', '-r', "$dir/stale.html", "$dir/stale.html.gz") == 0 or die;
chomp(my $ino = `stat -c %i '$dir/stale.html'`);
system('setfattr', '-n', 'user.adaptive_deflate', '-v',
       '2 ino=' . ($ino + 1) . ' size=' . length($orig)
       . ' mtime=' . `stat -c %.9Y '$dir/stale.html'` =~ s/\s+//r
       . ' ctime=' . `stat -c %.9Z '$dir/stale.html'` =~ s/\s+//r,
       "$dir/stale.html.gz") == 0 or die;
mkdir "$dir/dir.html.gz";
mkfifo("$dir/fifo.html.gz", 0644) or die "mkfifo: $!";
make_sibling("$dir/unreadable.html", 'gzip', $decoy);
chmod 0000, "$dir/unreadable.html.gz";
# Another user's file with a mark that names F (in a directory others may
# write, anyone can make one): only F's owner or root wrote ours.
make_sibling("$dir/foreign.html", 'gzip', $decoy);
chown((getpwnam('nobody'))[2], -1, "$dir/foreign.html.gz") if $> == 0;

# Symlinked siblings: allowed under FollowSymLinks, refused without it,
# and under SymLinksIfOwnerMatch only when owners match.
for my $sub (qw(links ownerlinks)) {
    spew("$dir/$sub/a.html", $orig);
    utime $old, $old, "$dir/$sub/a.html";
    compress_to('gzip', $orig, "$dir/target-$sub.gz");
    mark_sibling("$dir/$sub/a.html", "$dir/target-$sub.gz");
    symlink("../target-$sub.gz", "$dir/$sub/a.html.gz") or die "symlink: $!";
}
spew("$dir/nolink.html", $orig);
utime $old, $old, "$dir/nolink.html";
compress_to('gzip', $decoy, "$dir/decoy.gz");
mark_sibling("$dir/nolink.html", "$dir/decoy.gz");
symlink('decoy.gz', "$dir/nolink.html.gz") or die "symlink: $!";
spew("$dir/ownerlinks/b.html", $orig);
utime $old, $old, "$dir/ownerlinks/b.html";
compress_to('gzip', $decoy, "$dir/other-owner.gz");
mark_sibling("$dir/ownerlinks/b.html", "$dir/other-owner.gz");
my $nobody = (getpwnam('nobody'))[2];
chown $nobody, -1, "$dir/other-owner.gz" if $> == 0;
symlink('../other-owner.gz', "$dir/ownerlinks/b.html.gz") or die;

# ---- freshness: the sibling must hold F's current version -----------------
# An edit in the same second as the precompress run, its mtime restored
# (touch -r): timestamps alone would pass it; F's ctime says otherwise.
make_sibling("$dir/sameedit.html", 'gzip', $decoy);
my $edited = "$orig<!-- edited -->\n";
spew("$dir/sameedit.html", $edited);
system('touch', '-r', "$dir/sameedit.html.gz", "$dir/sameedit.html") == 0
    or die;
# A rollback: release 2 precompressed, then release 1 copied back with
# cp -p (an older mtime than the sibling's).
my $v1 = "$orig<!-- release 1 -->\n";
spew("$dir/rollback.v1", $v1);
utime $old - 500, $old - 500, "$dir/rollback.v1";
make_sibling("$dir/rollback.html", 'gzip', $decoy);
system('cp', '-p', "$dir/rollback.v1", "$dir/rollback.html") == 0 or die;
# A sibling nobody vouched for (gzip -k, brotli -k): F's mtime, no mark.
compress_to('br', $decoy, "$dir/unmarked.html.br");
system('touch', '-r', "$dir/unmarked.html", "$dir/unmarked.html.br") == 0
    or die;
# Release 2 with release 1's size and mtime (normalised build times), the
# old sibling left behind, then its inode touched (chmod, a hard link):
# the mark still names release 1.
make_sibling("$dir/chmodded.html", 'gzip', $decoy);
(my $v2 = $orig) =~ tr/a-z/A-Z/;
spew("$dir/chmodded.html", $v2);
system('touch', '-r', "$dir/chmodded.html.gz", "$dir/chmodded.html") == 0
    or die;
sleep 0.02;
chmod 0640, "$dir/chmodded.html.gz";
chmod 0644, "$dir/chmodded.html.gz";
link("$dir/chmodded.html.gz", "$dir/chmodded.snapshot") or die "link: $!";

my $gzfile = slurp("$dir/page.html.gz");
my $brfile = slurp("$dir/page.html.br");
# A build without brotli leaves .br files alone: F as it is to br-only
# clients, and the sections on the sibling's bytes use the .gz.
my $b = built('br');
my $identity_tag = qr{^(W/)?"[^"-]+-[^"-]+"$};

# ---- the sibling is served as is ----------------------------------------
my $r = fetch('/static/page.html', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), if_built('br', undef), 'br sibling');
ok $r->content eq ($b ? $brfile : $orig);
ok t_cmp($r->header('Content-Length'), length($b ? $brfile : $orig),
         'sibling length');
ok t_cmp($r->header('Content-Type'), qr{^text/html}, "F's type");
ok t_cmp(vary_count($r), 1, 'Vary');
ok t_cmp(decode_body($r), $orig, 'decodes to F');
my $br_etag = $r->header('ETag');
ok t_cmp($br_etag, $b ? qr/-ad-br-pre\.[0-9a-f]{16}"$/ : $identity_tag,
         'sibling ETag carries the coding');
$r = fetch('/static/page.html?notes', 'Accept-Encoding' => 'br');
my $n = note_for(qr{^GET /static/page.html\?notes });
ok t_cmp("$n->{coding} $n->{reason} $n->{level}",
         $b ? 'br precompressed -' : 'identity not-accepted 0', 'sibling notes');

$r = fetch('/static/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'gz sibling');
ok $r->content eq $gzfile;
ok t_cmp($r->header('Content-Length'), length($gzfile));
my $gz_etag = $r->header('ETag');

($r, $n) = fetch_noted('/static/page.html', undef);
uncoded($r, $n, 200, 'not-accepted', 'no Accept-Encoding');
ok $r->content eq $orig;
ok t_cmp(vary_count($r), 1, 'identity answer varies too');
my $id_etag = $r->header('ETag');
ok $gz_etag ne $id_etag
   && ($b ? $br_etag ne $gz_etag && $br_etag ne $id_etag : $br_etag eq $id_etag);

# ---- q-values, then server preference (br gzip) ----------------------------
my @choice = (
    [ 'gzip, br', if_built('br', 'gzip') ],
    [ 'gzip;q=1, br;q=0.5', 'gzip' ],
    [ 'br;q=0, gzip', 'gzip' ],
    [ 'gzip;q=0.5, br;q=0.5', if_built('br', 'gzip') ],
    [ '*', if_built('br', 'gzip') ],
    [ 'identity', undef ],
);
for my $c (@choice) {
    ($r, $n) = fetch_noted('/static/page.html', $c->[0]);
    ok t_cmp($r->header('Content-Encoding'), $c->[1], "AE $c->[0]");
    ok t_cmp(join(' ', $r->code, $n->{coding}, $n->{reason}),
             defined $c->[1] ? "200 $c->[1] precompressed"
                             : '200 identity not-accepted',
             "AE $c->[0]: status, coding and reason");
}

# ---- 304, HEAD, Range over the sibling's bytes -------------------------------
my $c = if_built('br', 'gzip');
my ($cfile, $c_etag) = $b ? ($brfile, $br_etag) : ($gzfile, $gz_etag);
$r = fetch('/static/page.html', 'Accept-Encoding' => $c,
           'If-None-Match' => $c_etag);
ok t_cmp($r->code, 304, 'If-None-Match -> 304');
ok t_cmp(vary_count($r), 1, '304 with Vary');
ok t_cmp($r->header('ETag'), $c_etag, '304 names the sibling ETag');
my $lm = fetch('/static/page.html', 'Accept-Encoding' => $c)
    ->header('Last-Modified');
$r = fetch('/static/page.html', 'Accept-Encoding' => $c,
           'If-Modified-Since' => $lm);
ok t_cmp($r->code, 304, 'If-Modified-Since -> 304');
my $g = fetch('/static/page.html', 'Accept-Encoding' => $c);
my $h = head('/static/page.html', 'Accept-Encoding' => $c);
for my $name (qw(Content-Encoding Content-Length ETag Vary Content-Type)) {
    ok t_cmp($h->header($name), $g->header($name), "HEAD $name");
}
$r = fetch('/static/page.html', 'Accept-Encoding' => $c,
           'Range' => 'bytes=0-9');
ok t_cmp($r->code, 206, 'Range -> 206');
ok t_cmp($r->header('Content-Range'), 'bytes 0-9/' . length($cfile));
ok $r->content eq substr($cfile, 0, 10);
$r = fetch('/static/page.html', 'Accept-Encoding' => $c,
           'Range' => 'bytes=0-9', 'If-Range' => $c_etag);
ok t_cmp($r->code, 206, 'If-Range with the sibling ETag -> 206');
# The identity ETag must not let a range of coded bytes be spliced into an
# identity download.
$r = fetch('/static/page.html', 'Accept-Encoding' => $c,
           'Range' => 'bytes=0-9', 'If-Range' => $id_etag);
ok t_cmp($r->code, 200, 'If-Range with the identity ETag -> full 200');
ok $r->content eq $cfile;

# ---- index files ----------------------------------------------------------------
$r = fetch('/static/', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), if_built('br', undef),
         'index.html.br for /static/');
ok t_cmp(decode_body($r), $orig);

# ---- fall back to on-the-fly when a sibling is missing, stale or unusable ------
$r = fetch('/static/gzonly.html', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), if_built('br', undef),
         'no .br: brotli on the fly');
ok t_cmp(decode_body($r), $orig);
$r = fetch('/static/gzonly.html', 'Accept-Encoding' => 'gzip, br');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'only .gz exists: served');
ok $r->content eq slurp("$dir/gzonly.html.gz");

for my $case (qw(stale dir fifo unreadable nolink ownerlinks/b foreign)) {
    $r = fetch("/static/$case.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->code, 200, "$case: 200");
    ok t_cmp(decode_body($r), $orig, "$case: not the sibling");
}
$r = fetch('/static/sameedit.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(decode_body($r), $edited, 'same-second edit: the new bytes');
$r = fetch('/static/rollback.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(decode_body($r), $v1, 'rollback: the rolled-back bytes');
$r = fetch('/static/unmarked.html', 'Accept-Encoding' => 'br');
ok t_cmp(decode_body($r), $orig, 'unmarked: not served');
$r = fetch('/static/chmodded.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(decode_body($r), $v2, 'chmod and link of an old sibling: not served');
# The same, the sibling's inode touched after a first request saw it
# stale: a stale sibling made "fresh" by a change to its own inode.
# Release 2 of F with release 1's mtime (normalised build mtimes), the
# sibling from release 1 left behind; then a chmod / a hard link (backups
# with cp -al, rsnapshot) touch the sibling's inode.
for my $how (qw(chmod link)) {
    my $f = "$dir/fresh/$how.html";
    page($f, "<p>RELEASE ONE</p>\n" x 100, qw(gzip));
    spew($f, "<p>RELEASE TWO</p>\n" x 100);
    utime old_time(), old_time(), $f;
    $r = fetch("/static/fresh/$how.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp(decode_body($r), qr/RELEASE TWO/, "sanity: $how: stale before");
    sleep 0.02;
    if ($how eq 'chmod') {
        chmod 0644, "$f.gz";
    }
    else {
        link("$f.gz", "$f.gz.snapshot") or die "link: $!";
    }
    $r = fetch("/static/fresh/$how.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp(decode_body($r), qr/RELEASE TWO/,
             "$how of the old sibling: F's current bytes still");
}
my $log = error_log();
ok t_cmp($log, qr/ignoring \S*stale\.html\.gz: its mark names another version/,
         'stale logged');
ok t_cmp($log, qr/ignoring \S*foreign\.html\.gz: it is owned by neither root nor the owner of/,
         'another owner\'s logged');
# (a build without brotli does not look at .br files)
ok t_cmp($log =~ /ignoring \S*unmarked\.html\.br: no mark shows that it holds/
         ? 'logged' : 'not logged', $b ? 'logged' : 'not logged',
         'unmarked logged');
# Once per process, not per request: ten requests on one kept-alive
# connection (one child) add one line at most.
my $count = () = $log =~ /ignoring \S*stale\.html\.gz/g;
my $ka = LWP::UserAgent->new(keep_alive => 1);
my $base = 'http://' . Apache::TestRequest::hostport();
$ka->get("$base/static/stale.html", 'Accept-Encoding' => 'gzip') for 1 .. 10;
my $log2 = error_log();
my $count2 = () = $log2 =~ /ignoring \S*stale\.html\.gz/g;
ok t_cmp($count2 - $count, qr/^[01]$/, 'the stale sibling logged once per process');

# ---- symlinks allowed ----------------------------------------------------------
$r = fetch('/static/links/a.html', 'Accept-Encoding' => 'gzip');
ok $r->content eq slurp("$dir/target-links.gz");
$r = fetch('/static/ownerlinks/a.html', 'Accept-Encoding' => 'gzip');
ok $r->content eq slurp("$dir/target-ownerlinks.gz");

# ---- the sibling of an edited file goes stale at once -------------------------
spew("$dir/gzonly.html", "$orig<!-- now -->\n");
$r = fetch('/static/gzonly.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(decode_body($r), "$orig<!-- now -->\n", 'edit: on the fly');

# ---- Vary set by mod_headers ("set" replaces it) keeps Accept-Encoding ----------
# A shared cache must not hand the sibling to clients that never asked
# for it: the module merges Vary after mod_headers, on and off.
for my $d (qw(vary varyoff)) {
    page("$dir/$d/page.html", $orig, qw(gzip br));
    $r = fetch("/static/$d/page.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->content, slurp("$dir/$d/page.html.gz"),
             "sanity: $d: the sibling is served");
    my $vary = join(',', $r->header('Vary'));
    ok t_cmp($vary, qr/User-Agent/, "sanity: $d: mod_headers' Vary is there");
    ok t_cmp($vary, qr/Accept-Encoding/i,
             "$d: the gzip sibling varies on Accept-Encoding ($vary)");
    $r = fetch("/static/$d/page.html", 'Accept-Encoding' => 'identity');
    $vary = join(',', $r->header('Vary'));
    ok t_cmp($vary, qr/Accept-Encoding/i,
             "$d: so does F where a sibling exists ($vary)");
}

# ---- a mark is remembered only while the sibling is as it was ------------------
# (each child reads a sibling's mark once per version of the sibling: a
# mark removed or set later moves the sibling's ctime, and is read again)
{
    make_path("$dir/memo");
    spew("$dir/memo/m.html", $orig);
    chmod 0644, "$dir/memo/m.html";
    utime $old, $old, "$dir/memo/m.html";
    # the decoy's bytes, marked as F's: a response tells which was read
    make_sibling("$dir/memo/m.html", 'gzip', $decoy);
    sleep 2.1;      # settled, whatever the filesystem's grain
    my $count = sub {
        my ($tag, $want) = @_;
        scalar grep {
            (decode_body(fetch("/static/memo/m.html?$tag$_",
                               'Accept-Encoding' => 'gzip')) // '') eq $want
        } 1 .. 20;
    };
    ok t_cmp($count->('a', $decoy), 20, 'sanity: the marked sibling is served');
    system('setfattr', '-x', 'user.adaptive_deflate', "$dir/memo/m.html.gz") == 0
        or die 'setfattr -x';
    ok t_cmp($count->('b', $orig), 20,
             "its mark removed: F's bytes at once, from every child");
    mark_sibling("$dir/memo/m.html", "$dir/memo/m.html.gz");
    ok t_cmp($count->('c', $decoy), 20, 'its mark set again: served again');
}

# ---- a sibling a child holds goes as soon as its file changes -------------------
# Each child sends a sibling it checked from its own mapping of it while
# the path names that file, unchanged (adf_held.h): one renamed over it,
# written over in place (its mtime put back) or removed is never sent
# from the mapping; nor is a FIFO put in its place waited on.
{
    my $h = "$dir/held/h.html";
    make_path("$dir/held", "$dir/nommap");
    my @v = map { "held version $_\n" x 300 } 1 .. 3;
    for my $f ($h, "$dir/nommap/n.html") {
        spew($f, $orig);
        chmod 0644, $f;
        utime $old, $old, $f;
    }
    make_sibling($h, 'gzip', $v[0]);
    make_sibling("$dir/nommap/n.html", 'gzip', $v[0]);
    sleep 2.1;      # settled: held from the first request on
    my $count = sub {
        my ($url, $tag, $want) = @_;
        scalar grep {
            (decode_body(fetch("$url?$tag$_", 'Accept-Encoding' => 'gzip'))
             // '') eq $want
        } 1 .. 20;
    };
    my $put = sub {     # a marked sibling holding $data, renamed over
        my ($data) = @_;
        my $tmp = "$dir/held/.h.tmp";
        compress_to('gzip', $data, $tmp);
        system('touch', '-r', $h, $tmp) == 0 or die 'touch';
        chmod 0644, $tmp;
        mark_sibling($h, $tmp);
        rename $tmp, "$h.gz" or die "rename: $!";
    };
    my $u = '/static/held/h.html';
    ok t_cmp($count->($u, 'a', $v[0]), 20, 'held: the sibling is served');
    ok t_cmp(mapped("$h.gz") > 0 ? 1 : 0, 1,
             'held: ... from a mapping a child keeps after the response');
    ok t_cmp(wait_for(sub { !mapped("$h.gz") }, 8, 0.25), 1,
             'held: let go once no request asked for it in 2 s');
    $put->($v[1]);
    ok t_cmp($count->($u, 'b', $v[1]), 20,
             'held: a sibling renamed over it goes out at once, from every '
             . 'child');
    sleep 2.1;
    ok t_cmp($count->($u, 'c', $v[1]), 20, 'held: ... and is held in turn');
    my $gz = slurp("$h.gz");
    my $r = fetch("$u?range", 'Accept-Encoding' => 'gzip',
                  Range => 'bytes=10-109');
    ok t_cmp($r->code . ' ' . $r->content, '206 ' . substr($gz, 10, 100),
             'held: a range of its bytes');
    compress_to('gzip', $v[2], "$dir/held/.v2");
    overwrite("$h.gz", slurp("$dir/held/.v2"));
    system('touch', '-r', $h, "$h.gz") == 0 or die 'touch';
    ok t_cmp($count->($u, 'd', $v[2]), 20,
             'held: written over in place, its mtime put back: the bytes '
             . 'there now, never the held ones');
    unlink "$h.gz" or die;
    ok t_cmp($count->($u, 'e', $orig), 20, "held: removed: F's own bytes");
    $put->($v[1]);
    sleep 2.1;
    $count->($u, 'f', $v[1]);
    mkfifo("$dir/held/.fifo", 0644) or die "mkfifo: $!";
    rename "$dir/held/.fifo", "$h.gz" or die "rename: $!";
    ok t_cmp($count->($u, 'g', $orig), 20,
             "held: a FIFO renamed over it: F's own bytes, at once");
    ok t_cmp($count->('/static/nommap/n.html', 'a', $v[0]), 20,
             'EnableMMAP Off: the sibling from its file');
    ok t_cmp(mapped("$dir/nommap/n.html.gz"), 0,
             'EnableMMAP Off: ... never held');
}

my $remount_at;
END { system("umount -l '$remount_at' 2>/dev/null") if $remount_at }

# ---- a remount is another filesystem, whatever its device number ----------------
# Two copies of one ext4 image (cloned images, built alike) whose F and
# F.gz have the same inodes, sizes and times, to the nanosecond where the
# inode keeps them (debugfs puts the first's back), but other bytes and
# marks.  Mounted one after the other from the same loop device, the
# second's sibling goes out under its own tag, never the first's
# remembered one.  Whole seconds (128-byte inodes) and nanoseconds.
# (Root: not root, this fails.)
my @rv = map { ($_ x 3000) . "\n" } 'a', 'b';

# Overwrite $f in place: its inode kept.
sub overwrite {
    my ($f, $data) = @_;
    open(my $fh, '+<:raw', $f) or die "$f: $!";
    truncate($fh, 0) or die;
    print $fh $data;
    close $fh or die;
}

# The two images for inodes of $isize bytes, or () if they could not be
# made alike.
sub cloned_images {
    my ($isize) = @_;
    my @img = map { serverroot() . "/remount$isize-$_.img" } 1, 2;
    my $tmp = serverroot() . "/remount$isize";
    my @files = ('m.html', 'm.html.gz');
    make_path($tmp);
    system("truncate -s 8M '$img[0]' && mkfs.ext4 -q -F -I $isize '$img[0]'"
           . " && mount -o loop '$img[0]' '$tmp'") == 0 or return;
    spew("$tmp/m.html", $rv[0]);
    chmod 0644, "$tmp/m.html";
    utime $old, $old, "$tmp/m.html";
    make_sibling("$tmp/m.html", 'gzip');
    my %st = map { $_ => [split ' ', `stat -c '%i %.9Y %.9Z' '$tmp/$_'`] } @files;
    my $mark = `getfattr --only-values -n user.adaptive_deflate '$tmp/m.html.gz'`;
    my $len = -s "$tmp/m.html.gz";
    system('umount', $tmp);
    system("cp '$img[0]' '$img[1]' && mount -o loop '$img[1]' '$tmp'") == 0
        or return;
    compress_to('gzip', $rv[1], "$tmp.gz");
    my $gz = slurp("$tmp.gz");
    unlink "$tmp.gz";
    overwrite("$tmp/m.html", $rv[1]);
    overwrite("$tmp/m.html.gz", $gz);
    $mark =~ s/sha256=[0-9a-f]{64}/'sha256=' . sha256_hex($gz)/e;
    system('setfattr', '-n', 'user.adaptive_deflate', '-v', $mark,
           "$tmp/m.html.gz") == 0 or return;
    system('umount', $tmp);
    open(my $cmd, '>', "$tmp.cmd") or die;
    for my $f (@files) {
        my ($ino, @t) = @{$st{$f}};
        for my $i (0, 1) {
            my ($sec, $ns) = split /\./, $t[$i];
            my $field = (qw(mtime ctime))[$i];
            print $cmd "set_inode_field <$ino> $field \@$sec\n";
            print $cmd "set_inode_field <$ino> ${field}_extra ", $ns << 2, "\n"
                if $isize > 128;
        }
    }
    close $cmd;
    system("debugfs -w -f '$tmp.cmd' '$img[1]' >/dev/null 2>&1") == 0 or return;
    my @ids = map {
        system("mount -o loop,ro '$img[$_]' '$tmp'") == 0 or return;
        my $id = `cd '$tmp' && stat -c '%i %s %.9Y %.9Z' @files`;
        my $sha = sha256_hex(slurp("$tmp/m.html.gz"));
        system('umount', $tmp);
        [$id, $sha]
    } 0, 1;
    rmdir $tmp;
    return $len == length $gz && $ids[0][0] eq $ids[1][0]
           && $ids[0][1] ne $ids[1][1] ? @img : ();
}

for my $isize (128, 256) {
    my $kind = $isize > 128 ? 'nanoseconds' : 'whole seconds';
    my $mnt = "$dir/remount";
    my @img = cloned_images($isize);
    ok t_cmp(scalar @img, 2, "$kind: two images, one identity, other bytes");
    make_path($mnt);
    $remount_at = $mnt;
    chomp(my $dev = @img ? `losetup --find --show '$img[0]' 2>/dev/null` // '' : '');
    my $up = $dev && system('mount', $dev, $mnt) == 0;
    sleep 0.5;      # settled, on a filesystem of nanoseconds
    my $first = grep {
        (decode_body(fetch("/static/remount/m.html?$isize-a$_",
                           'Accept-Encoding' => 'gzip')) // '') eq $rv[0]
    } 1 .. 20;
    # (its sibling held mapped until 2 s without a request: busy till then)
    wait_for(sub { system("umount '$mnt' 2>/dev/null") == 0 }, 6, 0.25)
        if $up;
    system('losetup', '-d', $dev) if $dev;
    my $same = $dev && system('losetup', $dev, $img[1]) == 0
               && system('mount', $dev, $mnt) == 0;
    my ($good, $bad) = (0, 0);
    for (1 .. 20) {
        my $r = fetch("/static/remount/m.html?$isize-b$_",
                      'Accept-Encoding' => 'gzip');
        my $tag = $r->header('ETag') // '';
        ((decode_body($r) // '') eq $rv[1]
         && index($tag, '-gzip-pre.' . substr(sha256_hex($r->content // ''), 0, 16)) >= 0)
            ? $good++ : $bad++;
    }
    ok t_cmp("$first, " . ($same ? 'remounted' : 'not remounted'),
             '20, remounted', "$kind: sanity: the first image's sibling served, "
             . 'then the second on the same device');
    ok t_cmp("$good good, $bad bad", '20 good, 0 bad',
             "$kind: the second image's sibling, under its own tag");
    system('umount', $mnt);
    system('losetup', '-d', $dev) if $dev;
    unlink @img;
}

# ---- the tool and the module agree about freshness ---------------------------------
# adaptive-precompress marks what it writes (adf_ident.h); after a chmod
# of F (chmod -R over the tree) the module calls the sibling stale, and
# the advised tool run makes it served again.
my $tool = ($ENV{ADF_MODULE} // '') =~ m{^(.*)/\.libs/[^/]+$}
           ? "$1/tools/adaptive-precompress" : '';
if (-x $tool) {
    spew("$dir/tool/page.html", $orig);
    chmod 0644, "$dir/tool/page.html";
    utime old_time(), old_time(), "$dir/tool/page.html";
    sleep 0.02;
    system($tool, '-q', "$dir/tool") == 0 or die "$tool";
    my $mark = `getfattr --only-values -n user.adaptive_deflate $dir/tool/page.html.gz 2>/dev/null`;
    ok t_cmp($mark, qr/^3 ino=\d+ size=\d+ mtime=\d+\.\d{9} ctime=\d+\.\d{9} sha256=[0-9a-f]{64}$/,
             'the tool marks the siblings it writes (adf_ident.h)');
    # F's ctime moves past the sibling's; the module logs "rewrite it with
    # adaptive-precompress".
    sleep 0.02;
    chmod 0644, "$dir/tool/page.html";
    fetch('/static/tool/page.html', 'Accept-Encoding' => 'gzip');
    ok t_cmp(note_for(qr{^GET /static/tool/page.html })->{reason},
             qr/^(max|target)$/, 'sanity: the module calls it stale');
    system($tool, '-q', "$dir/tool") == 0 or die "$tool";
    fetch('/static/tool/page.html?again', 'Accept-Encoding' => 'gzip');
    ok t_cmp(note_for(qr{^GET /static/tool/page.html\?again })->{reason},
             'precompressed', 'after the advised tool run it is served');
    # A sibling's bytes written over in place (the inode and its mark
    # kept, as "cat > F.gz" or a compressor truncating does): the mark
    # vouched for the bytes the tool wrote, not these.
    spew("$dir/tool/rw.html", $orig);
    chmod 0644, "$dir/tool/rw.html";
    utime old_time(), old_time(), "$dir/tool/rw.html";
    sleep 0.02;
    system($tool, '-q', "$dir/tool") == 0 or die "$tool";
    fetch('/static/tool/rw.html', 'Accept-Encoding' => 'gzip');
    ok t_cmp(note_for(qr{^GET /static/tool/rw.html })->{reason},
             'precompressed', 'sanity: a fresh sibling is served');
    my $sib = "$dir/tool/rw.html.gz";
    compress_to('gzip', "<html>other bytes</html>\n", "$sib.new");
    open(my $out, '+<', $sib) or die "$sib: $!";
    binmode $out;
    truncate($out, 0) or die;
    print $out slurp("$sib.new");
    close $out or die;
    unlink "$sib.new";
    ok t_cmp(scalar `getfattr --only-values -n user.adaptive_deflate $sib 2>/dev/null`,
             qr/^3 ino=/, 'sanity: the rewritten sibling keeps its mark');
    $r = fetch('/static/tool/rw.html?rewritten', 'Accept-Encoding' => 'gzip');
    ok t_cmp(decode_body($r), $orig, "rewritten in place: F's bytes go out");
    ok t_cmp(note_for(qr{^GET /static/tool/rw.html\?rewritten })->{reason},
             qr/^(max|target)$/, 'rewritten in place: not served as the sibling');
    ok t_cmp(error_log(), qr/ignoring \S*tool\/rw\.html\.gz: it was written over after its mark/,
             'rewritten in place: logged');
    # the advice (run the tool) works: it does not take the old mark for
    # proof either
    system($tool, '-q', "$dir/tool") == 0 or die "$tool";
    $r = fetch('/static/tool/rw.html?again', 'Accept-Encoding' => 'gzip');
    ok t_cmp(note_for(qr{^GET /static/tool/rw.html\?again })->{reason},
             'precompressed', 'rewritten in place: served again after the tool');
    ok t_cmp(decode_body($r), $orig, "rewritten in place: the tool's bytes are F's");
}
else {
    # The tool is built with the module: its absence is a broken build.
    holds 0, "adaptive-precompress beside the module ($tool)" for 1 .. 10;
}

# ---- siblings looked at and not sent are not held open ---------------------
# The checks read a sibling through a descriptor (what is sent is what was
# checked); one that is not sent is closed at once, not with the request:
# slow clients of a large F would otherwise hold every sibling looked at
# (here a fresh .gz, for Vary, and a stale .br) for as long as F takes.
if (needs_root(2, 'the server\'s descriptors')) {
    my $f = "$dir/slow.html";
    spew($f, $orig x (8_000_000 / length $orig));
    chmod 0644, $f;
    utime $old, $old, $f;
    make_sibling($f, 'gzip');
    make_sibling($f, 'br', $decoy);
    system('touch', '-d', '@' . ($old - 5), "$f.br") == 0 or die;
    my @socks;
    for (1 .. 3) {
        my $s = IO::Socket::INET->new(PeerAddr => Apache::Test::vars('servername'),
                                      PeerPort => Apache::Test::vars('port'))
            or die "connect: $!";
        setsockopt($s, SOL_SOCKET, SO_RCVBUF, 4096);
        print $s "GET /static/slow.html HTTP/1.1\r\nHost: localhost\r\n\r\n";
        sysread($s, my $got, 100);
        push @socks, $s;
    }
    sleep 0.5;
    my %open;
    for my $fd (glob('/proc/[0-9]*/fd/*')) {
        my $to = readlink($fd) // next;
        $open{$1}++ if $to =~ m{^\Q$f\E(|\.gz|\.br)$};
    }
    close $_ for @socks;
    ok t_cmp($open{''} // 0, 3, "sanity: three responses of F under way");
    ok t_cmp(($open{'.gz'} // 0) + ($open{'.br'} // 0), 0,
             'no sibling held open meanwhile');
}
