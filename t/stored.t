# Stored bytes are exactly the bytes they stand for:
#  - a cache entry is never made from a version that a write within the
#    same timestamp tick can still replace (ext4 with 128-byte inodes keeps
#    whole seconds);
#  - every stored body has an ETag of its own (its SHA-256), however equal
#    its mtime and length to another's, and conditionals honour it;
#  - a negotiated (MultiViews) tag carries the coding like any other;
#  - the cache is the directory checked at start-up, not whatever its path
#    names later;
#  - a full filesystem makes the cache evict, not fill it up, and leaves a
#    reserve; eviction deletes at once, so MAXSIZE holds under churn.
# Configuration: t/conf/features/stored.conf.in (the cache's directory:
# cache.conf.in).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestRequest ();
use Apache::TestUtil;
use Compress::Zlib ();
use Digest::SHA qw(sha256 sha256_hex);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use LWP::UserAgent ();
use POSIX ();
use Time::HiRes qw(sleep time);
use ADFTest;

# A one-process server (ADF_VALGRIND=1: httpd -X under valgrind) serves
# what needs no scratch server; the scratch servers' part (10 assertions)
# is left out of its plan.  Not root: the loop mount and the scratch
# servers' checks fail.
my $one = $ENV{ADF_VALGRIND} ? 1 : 0;
my @codings = codings();
plan tests => 7 + 3 + 2 + 2 + 2 + 2 + 14 + 2 * @codings + 3 + 13
    + ($one ? 0 : 3 + 5 + 2);

my $root = docroot();
my $text = slurp("$root/corpus/book.txt");
my $page = slurp("$root/corpus/page.html");
my $c = built('br') ? 'br' : 'gzip';       # the cache's first coding here
my $ext = sibling_ext($c);
my $ua = Apache::TestRequest::user_agent();
my $nobody = (getpwnam('nobody'))[2];
my $nogroup = (getgrnam('nogroup'))[2];
$> == 0 or print "# not root: the loop mount and the scratch servers fail\n";

sub written { status_json()->{cache}{dirs}[0]{written} }

sub put {
    my ($file, $data, $mtime) = @_;
    spew("$file.new", $data);
    chmod 0644, "$file.new";
    utime $mtime, $mtime, "$file.new" if defined $mtime;
    rename "$file.new", $file or die "rename $file: $!";
}

my $mtime = time - 5000;        # dated alike: cp -p, rsync -a
idle();

# ---- same-second edits on a filesystem of whole seconds -----------------------
# A loop-mounted ext4 with 128-byte inodes (what mke2fs picks under
# 512 MB) in the cache's part of the site.  v1 is written at the start of
# a second and asked for (a miss: queued); v2, of the same size, replaces
# it in place within the same second: same inode, size, mtime and ctime.
# No br answer may then be v1.
my $mnt = "$root/cache/ext4";
my $img = serverroot() . '/ext4.img';
make_path($mnt);
my $mounted;
END { system('umount', '-l', $mnt) if $mounted }
$mounted = system("truncate -s 16M '$img' && mkfs.ext4 -q -F -I 128 '$img'"
                     . " && mount -o loop '$img' '$mnt'") == 0;
ok t_cmp($mounted ? 1 : 0, 1, 'an ext4 image with 128-byte inodes, mounted');
chmod 0755, $mnt;
spew("$mnt/probe", 'x');
ok t_cmp(`stat -c %.9Z '$mnt/probe'` =~ /\.0{9}$/ ? 1 : 0, 1,
         'its timestamps are whole seconds');
my ($rounds, $old_served, $hits_v2) = (0, 0, 0);
for my $i (1 .. 8) {
    last if $rounds == 3 || !$mounted;
    my $f = "$mnt/edit$i.html";
    my ($v1, $v2) = (substr($text, 3000 * $i, 9000),
                     substr($text, 200000 + 3000 * $i, 9000));
    my $t = time;
    sleep(int($t) + 1 - $t + 0.02);
    my $sec = int(time);
    spew($f, $v1);
    chmod 0644, $f;
    my $w0 = written();
    fetch_noted("/cache/ext4/edit$i.html", $c);
    # until the worker wrote something, or late in the second
    wait_for(sub { written() > $w0 || time - $sec > 0.7 }, 1);
    open my $fh, '+<:raw', $f or die "$f: $!";
    print $fh $v2;
    close $fh;
    next if int(time) != $sec;          # too late: not the same second
    $rounds++;
    my $end = time + 4;
    while (time < $end) {
        my ($r) = fetch_noted("/cache/ext4/edit$i.html", $c);
        $old_served++ if (decode_body($r) // '') ne $v2;
        sleep 0.2;
    }
    # (prefork: the worker's child can be gone, and the singleton take
    # over in another, for over a minute: CI saw "worker ... gone" at 60 s)
    my ($r, $n) = wait_hit("/cache/ext4/edit$i.html", $c);
    $hits_v2++ if ($n->{cache} // '') eq 'hit' && decode_body($r) eq $v2;
}
ok t_cmp($rounds, 3, 'three edits within one second');
ok t_cmp($old_served, 0, 'no answer is the version replaced in place');
ok t_cmp($hits_v2, $rounds, 'each settled version is cached: the new bytes');
system('umount', $mnt) if $mounted;
$mounted = 0;
unlink $img;
ok t_cmp(-d $mnt && !-e "$mnt/probe" ? 1 : 0, 1, 'unmounted');
rmdir $mnt;
ok t_cmp(written() > 0 ? 1 : 0, 1, 'the worker wrote entries meanwhile');

# ---- a filesystem whose ctime does not follow changes: never cached ---------
# Two squashfs images built with one normalised time (as image builds do)
# give two versions of a file one identity: device, inode, size, mtime
# and ctime.  Files there are compressed on the fly, never cached.
my $sq = "$root/cache/sq";
my $sqi = serverroot() . '/sq';
make_path($sq, "$sqi/v1", "$sqi/v2");
my ($sv1, $sv2) = (substr($text, 7000, 20000), substr($text, 7000, 20000));
substr($sv2, 100, 1) = substr($sv2, 100, 1) eq 'x' ? 'y' : 'x';
spew("$sqi/v1/app.html", $sv1);
spew("$sqi/v2/app.html", $sv2);
my $sq_ok = 1;
for my $v (qw(v1 v2)) {
    $sq_ok &&= system("mksquashfs '$sqi/$v' '$sqi/$v.img' -all-time 1700000000"
                      . " -all-root -noappend -quiet >/dev/null 2>&1") == 0;
}
my $sq_mounted;
END { system('umount', '-l', $sq) if $sq_mounted }
$sq_mounted = $sq_ok && system('mount', '-o', 'loop,ro', "$sqi/v1.img", $sq) == 0;
ok t_cmp($sq_mounted ? 1 : 0, 1, 'a squashfs image with normalised times, mounted');
my $sq_hits = 0;
for (1 .. 15) {
    my ($r, $n) = fetch_noted('/cache/sq/app.html', $c);
    $sq_hits++ if ($n->{cache} // '') eq 'hit';
    sleep 0.2;
}
ok t_cmp($sq_hits, 0, 'its files are never answered from the cache');
system('umount', $sq) if $sq_mounted;
$sq_mounted = $sq_ok && system('mount', '-o', 'loop,ro', "$sqi/v2.img", $sq) == 0;
my ($sqr) = fetch_noted('/cache/sq/app.html', $c);
ok t_cmp(decode_body($sqr), $sv2, 'the next image\'s version, not the first');
system('umount', $sq) if $sq_mounted;
$sq_mounted = 0;

# ---- a FIFO swapped in for a queued file does not stop the worker -----------
# The worker opens files without blocking and reads only regular ones.
make_path("$root/cache/fifo");
put("$root/cache/fifo/x.html", substr($text, 9000, 20000));
set_load(90);       # not idle: the file stays queued
wait_for(sub { !status_json()->{cache}{idle} }, 10) or die 'still idle';
fetch_noted('/cache/fifo/x.html', $c);
POSIX::mkfifo("$root/cache/fifo/ff", 0644) or die "mkfifo: $!";
rename "$root/cache/fifo/ff", "$root/cache/fifo/x.html" or die;
my $errlog = serverroot() . '/logs/error_log';
my $logged = length slurp($errlog);
idle();
put("$root/cache/fifo/after.html", substr($text, 30000, 20000));
my ($ar, $an) = wait_hit('/cache/fifo/after.html', $c, 30);
ok t_cmp($an->{cache}, 'hit', 'the worker goes on after a FIFO (a later file cached)');
# ... the same worker: it was not stuck until its child retired
my $since = substr(slurp($errlog), $logged);
ok t_cmp(($since =~ m{fifo/x\.html changed or gone, left}
          && $since !~ m{fifo/x\.html, left unfinished}) ? 1 : 0, 1,
         'the FIFO was left at once, not by a worker stuck on it');
unlink "$root/cache/fifo/x.html";

# ---- an entry another user planted is not served ------------------------------
# (the worker, the children's user, writes every entry: another owner's
# file, however valid its trailer, is no entry)
{
    my $cdir = serverroot() . '/adfcache';
    make_path("$root/cache/plant");
    my $real = substr($text, 50000, 20000);
    put("$root/cache/plant/p.html", $real, $mtime);
    wait_hit('/cache/plant/p.html', $c);
    # the entry that decodes to the page (its trailer stripped)
    my @entries = glob("$cdir/*$ext");
    my ($entry) = grep { (decode_as($c, substr(slurp($_), 0, -148)) // '') eq $real }
                  @entries;
    if (!defined $entry) {
        # what the directory holds, so that the failure shows why
        print "# no entry decodes to the page (", length $real, " bytes); in $cdir: ",
              join(', ', map {
                  my $d = decode_as($c, substr(slurp($_), 0, -148));
                  "$_ (" . (-s $_) . ' bytes, '
                  . (defined $d ? 'decodes to ' . length($d) : 'does not decode') . ')'
              } @entries), "\n";
        die 'no entry decodes to the page';
    }
    my $forged = "$entry.forged";
    system('cp', '-p', $entry, $forged) == 0 or die;
    forge($entry, $forged, $c, '<script>alert("planted")</script>' . ('.' x 300));
    chown((getpwnam('daemon'))[2], -1, $forged);
    chmod 0644, $forged;        # readable: what its owner would make it
    rename $forged, $entry or die;
    my ($bad, $good) = (0, 0);
    for (1 .. 5) {
        my ($pr) = fetch_noted('/cache/plant/p.html', $c);
        my $body = decode_body($pr) // '';
        $bad++ if $body =~ /planted/;
        $good++ if $body eq $real;
    }
    ok t_cmp("$good real, $bad planted", '5 real, 0 planted',
             'an entry of another owner is never served');
    my ($hr, $hn) = wait_hit('/cache/plant/p.html', $c, 30);
    ok t_cmp(($hn->{cache} // '') eq 'hit' && decode_body($hr) eq $real ? 1 : 0, 1,
             'the worker makes it again, its own');
}

# ---- a FIFO in an entry's place holds no worker ----------------------------------
# (the children's own user may write the directory, a CGI among them: a
# request's open of an entry must not wait for a writer)
{
    my $cdir = serverroot() . '/adfcache';
    make_path("$root/cache/ffe");
    my $real = substr($text, 70000, 20000);
    put("$root/cache/ffe/f.html", $real, $mtime);
    wait_hit('/cache/ffe/f.html', $c);
    my ($entry) = grep { (decode_as($c, substr(slurp($_), 0, -148)) // '') eq $real }
                  glob("$cdir/*$ext");
    defined $entry or die 'no entry decodes to the page';
    unlink $entry or die "unlink $entry: $!";
    POSIX::mkfifo($entry, 0644) or die "mkfifo: $!";
    chown $nobody, $nogroup, $entry;
    my $base = 'http://' . Apache::Test::vars('servername') . ':'
               . Apache::Test::vars('port');
    my $quick = LWP::UserAgent->new(timeout => 10);
    my $r = $quick->get("$base/cache/ffe/f.html", 'Accept-Encoding' => $c);
    ok t_cmp($r->code == 200 && (decode_body($r) // '') eq $real ? 1 : 0, 1,
             'a FIFO in an entry\'s place: the page at once, not a worker '
             . 'waiting in open()');
    my ($hr, $hn) = wait_hit('/cache/ffe/f.html', $c, 30);
    ok t_cmp(($hn->{cache} // '') eq 'hit' && -f $entry
             && decode_body($hr) eq $real ? 1 : 0, 1,
             'the worker replaces the FIFO with the entry');
}

# ---- an entry copied back without -p keeps F's validators ---------------------
# (a cache directory restored with plain cp: the bytes are the entry's,
# vouched for by its trailer, but its mtime is the copy's.  Last-Modified
# and the tag's mtime part stay F's, as when the worker wrote it: the
# client's conditionals still match and no date from the future goes out.)
{
    my $cdir = serverroot() . '/adfcache';
    make_path("$root/cache/cpb");
    my $real = substr($text, 90000, 20000);
    put("$root/cache/cpb/c.html", $real, $mtime);
    my ($r1) = wait_hit('/cache/cpb/c.html', $c);
    my ($entry) = grep { (decode_as($c, substr(slurp($_), 0, -148)) // '') eq $real }
                  glob("$cdir/*$ext");
    defined $entry or die 'no entry decodes to the page';
    spew($entry, slurp($entry));    # written in place: its owner kept, mtime now
    my ($r2, $n2) = fetch_noted('/cache/cpb/c.html', $c);
    ok t_cmp(join(' | ', ($n2->{cache} // ''), decode_body($r2) eq $real ? 'same bytes' : 'other bytes',
                  $r2->header('Last-Modified') // '', $r2->header('ETag') // ''),
             join(' | ', 'hit', 'same bytes', $r1->header('Last-Modified') // '-',
                  $r1->header('ETag') // '-'),
             'an entry copied back: a hit under F\'s Last-Modified and the same tag');
    ok t_cmp(abs((stat $entry)[9] - time) < 60 ? 1 : 0, 1, '(its mtime is the copy\'s)');
}

# ---- one ETag per body: two versions, one mtime, equal entry lengths ----------
# v2 differs from v1 in two bytes swapped: the same size, and (for brotli,
# searched with the CLI at the cache's settings) the same entry length.
# Dated alike (cp -p, rsync -a, reproducible builds), httpd's
# FileETag MTime Size would give both entries one tag.
my $v1 = substr($text, 100000, 20000);
my $v2;
sub br_len {
    my ($data) = @_;
    my $in = File::Temp->new;
    print $in $data;
    close $in;
    return length(`brotli -q 11 -w 15 -c '$in'`);
}
my $want = $c eq 'br' ? br_len($v1) : undef;
for my $at (map { 97 * $_ } 1 .. 150) {
    my $cand = $v1;
    my ($x, $y) = (substr($cand, $at, 1), substr($cand, $at + 1, 1));
    next if $x eq $y;
    substr($cand, $at, 2) = "$y$x";
    if (!defined $want || br_len($cand) == $want) {
        $v2 = $cand;
        last;
    }
}
ok t_cmp(defined $v2 ? 1 : 0, 1, 'a second version of the same size');
make_path("$root/cache/tags");
put("$root/cache/tags/page.html", $v1, $mtime);
my ($r1) = wait_hit('/cache/tags/page.html', $c);
my $e1 = $r1->header('ETag') // '';
put("$root/cache/tags/page.html", $v2, $mtime);
sleep 2.1;          # settled
my ($r2, $n2) = wait_hit('/cache/tags/page.html', $c);
my $e2 = $r2->header('ETag') // '';
ok t_cmp($n2->{cache}, 'hit', 'the second version cached');
ok t_cmp(decode_body($r2), $v2);
ok t_cmp($c ne 'br' || length($r1->content) == length($r2->content) ? 1 : 0, 1,
         'the two entries have one length (' . length($r1->content) . ', '
         . length($r2->content) . ')');
ok t_cmp($e1 ne $e2 ? 1 : 0, 1, "two tags ($e1, $e2)");
my ($r) = fetch_noted('/cache/tags/page.html', $c, 'If-None-Match' => $e1);
ok t_cmp($r->code, 200, "the first version's tag: 200, not 304");
ok t_cmp(decode_body($r), $v2);
($r) = fetch_noted('/cache/tags/page.html', $c, 'Range' => 'bytes=1000-',
           'If-Range' => $e1);
ok t_cmp($r->code, 200, "a range If-Range the first version's tag: all of it");
ok t_cmp(decode_body($r), $v2, '... which decodes (no splice of two versions)');
($r) = fetch_noted('/cache/tags/page.html', $c, 'If-None-Match' => $e2);
ok t_cmp($r->code, 304, 'its own tag: 304');
# If-None-Match compares weakly, If-Match strongly: a weak form of the
# tag revalidates, and never passes If-Match.
(my $strong = $e2) =~ s{^W/}{};
($r) = fetch_noted('/cache/tags/page.html', $c, 'If-None-Match' => "W/$strong");
ok t_cmp($r->code, 304, 'its tag made weak: If-None-Match 304');
($r) = fetch_noted('/cache/tags/page.html', $c, 'If-Match' => $strong);
ok t_cmp($r->code, $e2 =~ m{^W/} ? 412 : 200, 'its strong tag: If-Match passes');
($r) = fetch_noted('/cache/tags/page.html', $c, 'If-Match' => "W/$strong");
ok t_cmp($r->code, 412, 'its tag made weak: If-Match 412');
($r) = fetch_noted('/cache/tags/page.html', $c, 'If-Match' => $e1);
ok t_cmp($r->code, 412, "the first version's tag: If-Match 412");

# Every coding's tag names its bytes: the first 64 bits of their SHA-256.
for my $cd (@codings) {
    my ($hr, $hn) = wait_hit('/cache/tags/page.html', $cd);
    my ($hex) = ($hr->header('ETag') // '') =~ /-ad-\Q$cd\E-cache\.([0-9a-f]{16})"$/;
    ok t_cmp($hn->{cache}, 'hit', "$cd from the cache");
    ok t_cmp($hex // '', substr(sha256_hex($hr->content), 0, 16),
             "$cd: the tag is the body's SHA-256");
}

# Siblings: a version 3 mark's digest names the sibling's bytes; an earlier
# release's mark (version 2) still gives two versions two tags.
make_path("$root/sibtags");
for my $version (3, 2) {
    put("$root/sibtags/page.html", $v1, $mtime);
    my $s = make_sibling("$root/sibtags/page.html", 'gzip');
    mark_sibling("$root/sibtags/page.html", $s, $version);
    my $t1 = fetch('/sibtags/page.html', 'Accept-Encoding' => 'gzip')->header('ETag');
    put("$root/sibtags/page.html", $v2, $mtime);
    $s = make_sibling("$root/sibtags/page.html", 'gzip');
    mark_sibling("$root/sibtags/page.html", $s, $version);
    my $sr = fetch('/sibtags/page.html', 'Accept-Encoding' => 'gzip');
    my $t2 = $sr->header('ETag');
    if ($version == 3) {
        ok t_cmp($t2, qr/-ad-gzip-pre\.\Q@{[substr(sha256_hex(slurp($s)), 0, 16)]}\E"$/,
                 'a sibling\'s tag: its SHA-256, from the mark');
    }
    ok t_cmp($t1 ne $t2 ? 1 : 0, 1, "mark version $version: two tags ($t1, $t2)");
}

# ---- MultiViews: httpd's negotiated tag has no closing quote ----------------
# ("abc;def): the coding's suffix goes in all the same, and the tag is
# closed; the identity tag is httpd's own.
make_path("$root/mv", "$root/cache/mv", "$root/mvsib");
put("$root/mv/page.html", $page, $mtime);
my (%mv, %ce);
for my $cd (@codings, 'identity') {
    my $mr = fetch('/mv/page', 'Accept-Encoding' => $cd);
    $mv{$cd} = $mr->header('ETag') // '';
    $ce{$mr->header('Content-Encoding') // 'identity'} = 1;
}
ok t_cmp($mv{gzip}, qr/^W\/"[^"]*;[^"]*-ad-gzip"$/,
         "a negotiated gzip tag carries the suffix, closed, weak ($mv{gzip})");
# exactly httpd's tag, weak, the suffix and the closing quote
ok t_cmp($mv{gzip}, $mv{identity} =~ /"$/ ? qr/-ad-gzip"$/
                                          : ($mv{identity} =~ m{^W/} ? '' : 'W/')
                                            . "$mv{identity}-ad-gzip\"",
         "... and otherwise httpd's ($mv{identity})");
my %seen;
$seen{$_}++ for values %mv;
ok t_cmp(scalar(keys %seen), scalar(keys %ce),
         'one tag per coding sent (' . join(' ', sort keys %ce) . ')');
$r = fetch('/mv/page', 'If-None-Match' => $mv{gzip});
ok t_cmp($r->code, 200, 'the gzip tag from a client without gzip: 200');
ok t_cmp($r->content eq $page ? 1 : 0, 1, '... as it is');
# httpd compares its unclosed tag with none the client sends back closed:
# the module answers for it, with the client's own tag.
$r = fetch('/mv/page', 'Accept-Encoding' => 'gzip', 'If-None-Match' => $mv{gzip});
ok t_cmp($r->code . ' ' . ($r->header('ETag') // 'none'), "304 $mv{gzip}",
         'the negotiated gzip tag revalidates, and the 304 carries it');
$r = fetch('/mv/page', 'Accept-Encoding' => 'gzip', 'If-None-Match' => $mv{identity});
ok t_cmp($r->code . ' ' . ($r->header('ETag') // 'none'), "304 $mv{identity}",
         'so does the identity one, from a gzip client');
# The cache and siblings through MultiViews: tags per body; a 304 for the
# tag of the bytes that would go out, and only for it.
put("$root/cache/mv/page.html", $page, $mtime);
my %cmv;
for my $cd (@codings) {
    my ($hr, $hn) = wait_hit('/cache/mv/page', $cd);
    $cmv{$cd} = $hr->header('ETag') // '';
}
ok t_cmp($cmv{$c}, qr/;.*-ad-\Q$c\E-cache\.[0-9a-f]{16}"$/,
         "a negotiated cache entry's tag ($cmv{$c})");
($r) = fetch_noted('/cache/mv/page', $c, 'If-None-Match' => $cmv{$c});
ok t_cmp($r->code, 304, 'revalidates');
($r) = fetch_noted('/cache/mv/page', 'gzip', 'If-None-Match' => $cmv{$c});
ok t_cmp($r->code, $c eq 'gzip' ? 304 : 200, "another coding's tag does not");
put("$root/mvsib/page.html", $page, $mtime);
make_sibling("$root/mvsib/page.html", $_) for @codings;
my $st = fetch('/mvsib/page', 'Accept-Encoding' => 'gzip')->header('ETag') // '';
ok t_cmp($st, qr/;.*-ad-gzip-pre\.[0-9a-f]{16}"$/, "a negotiated sibling's tag ($st)");
ok t_cmp(fetch('/mvsib/page', 'Accept-Encoding' => 'gzip',
               'If-None-Match' => $st)->code, 304, 'revalidates');
ok t_cmp(fetch('/mvsib/page', 'If-None-Match' => $st)->code, 200,
         'not for a client that takes no gzip');

# ---- scratch servers: the cache's directory, a full filesystem, churn ----------
exit 0 if $one;

# A server of its own with a cache at $cache (MAXSIZE $max), idle.
sub cache_server {
    my ($sd, $cache, $max) = @_;
    make_path("$sd/htdocs");
    chmod 0755, $sd, "$sd/htdocs";
    spew("$sd/load", "5\n");
    chmod 0644, "$sd/load";
    my $url = scratch_server($sd, 'event', <<"CONF");
LogFormat "%r cache=%{adaptive_deflate_cache}n" n
CustomLog "$sd/notes" n
AdaptiveDeflate On
AdaptiveDeflateLoadSource file:$sd/load
AdaptiveDeflateLoadInterval 100ms
AdaptiveDeflateCache $cache $max
LogLevel warn adaptive_deflate:trace2
<Location "/adf-status">
    SetHandler adaptive-deflate-status
</Location>
CONF
    return $url;
}

# Ask until the cache answers (a cache entry's tag).
sub scratch_hit {
    my ($url, $path, $ae, $secs) = @_;
    my $r;
    wait_for(sub {
        $r = $ua->get("$url$path", 'Accept-Encoding' => $ae);
        $r->code == 200 && ($r->header('ETag') // '') =~ /-cache\./;
    }, $secs || 30);
    return $r;
}

# A cache entry forged for the same file: the real one's trailer (its key:
# the same name, the same source), other coded bytes, every check sum
# made again.  What a user who may write the cache's directory can plant.
sub forge {
    my ($real, $to, $coding, $data) = @_;
    my $bytes = slurp($real);
    my $t = substr($bytes, -148);
    my $body;
    compress_to($coding, $data, "$to.body");
    $body = slurp("$to.body");
    unlink "$to.body";
    substr($t, 12, 8) = pack('Q<', length $body);
    substr($t, 68, 4) = pack('V', Compress::Zlib::crc32($body));
    substr($t, 72, 32) = sha256($body);
    substr($t, 136, 4) = pack('V', Compress::Zlib::crc32(substr($t, 0, 136)));
    spew($to, $body . $t);
    chown $nobody, $nogroup, $to;
}

# The configured path runs through a symbolic link in a directory another
# user owns: start-up checks what it resolves to.  That user re-points the
# link at a directory of planted entries: the cache is still the
# directory opened at start.
{
    my $sd = tempdir(CLEANUP => 1);
    make_path("$sd/real/c", "$sd/planted/c", "$sd/userdir");
    chown $nobody, $nogroup, "$sd/real/c", "$sd/planted/c";
    chmod 0700, "$sd/real/c", "$sd/planted/c";
    chmod 0755, "$sd/real", "$sd/planted";
    symlink "$sd/real", "$sd/userdir/link" or die "symlink: $!";
    chown((getpwnam('daemon'))[2], -1, "$sd/userdir");
    my $url = cache_server($sd, "$sd/userdir/link/c", '1M');
    spew("$sd/htdocs/page.html", $page);
    chmod 0644, "$sd/htdocs/page.html";
    utime $mtime, $mtime, "$sd/htdocs/page.html";
    sleep 2.1;
    my $hr = scratch_hit($url, '/page.html', $c);
    ok t_cmp(($hr->header('ETag') // '') =~ /-cache\./ ? 1 : 0, 1,
             'cached through the link');
    my ($real) = glob("$sd/real/c/*$ext");
    forge($real, "$sd/planted/c/" . (split m{/}, $real)[-1], $c,
          '<script>alert("injected")</script>' . ('.' x 300));
    symlink "$sd/planted", "$sd/userdir/link.new" or die;
    rename "$sd/userdir/link.new", "$sd/userdir/link" or die;
    my ($bad, $good) = (0, 0);
    for (1 .. 10) {
        my $body = decode_body($ua->get("$url/page.html", 'Accept-Encoding' => $c)) // '';
        $bad++ if $body =~ /injected/;
        $good++ if $body eq $page;
    }
    ok t_cmp("$good real, $bad planted", '10 real, 0 planted',
             'the link re-pointed: the planted entry is never served');
    # A reload resolves the path again and checks where it leads now: a
    # directory the other user owns is refused.
    make_path("$sd/userdir/own/c");
    system('chown', '-R', 'daemon', "$sd/userdir/own") == 0 or die;
    symlink "$sd/userdir/own", "$sd/userdir/link.new" or die;
    rename "$sd/userdir/link.new", "$sd/userdir/link" or die;
    kill 'USR1', slurp("$sd/httpd.pid") =~ /(\d+)/;
    wait_for(sub { slurp("$sd/error_log") =~ /ADF00028/ }, 10);
    ok t_cmp(slurp("$sd/error_log"),
             qr{ADF00028: AdaptiveDeflateCache \Q$sd\E/userdir/link/c .*: \Q$sd\E/userdir \(a directory above the cache\): owned by another user},
             'a reload checks where the path leads now');
    stop_scratch_server($sd);
}

# A full filesystem (a 600 KB tmpfs as the cache, MAXSIZE far above it):
# entries are evicted to make room for new ones, and a twentieth of it
# stays free for everyone else.  16 pages of 40 KB with the three
# codings (every coding this build has is cached): as many more as the
# build has fewer, so that they fill the tmpfs as often.
{
    my $pages = 16 * 3 / @codings;
    my $sd = tempdir(CLEANUP => 1);
    make_path("$sd/c");
    chown $nobody, $nogroup, "$sd/c";
    chmod 0700, "$sd/c";
    my $ok = system('mount', '-t', 'tmpfs', '-o',
                    "size=600k,mode=0700,uid=$nobody,gid=$nogroup", 'tmpfs',
                    "$sd/c") == 0;
    my $url = cache_server($sd, "$sd/c", '64M');
    my ($hits, $min_avail) = (0, 1e9);
    for my $i (1 .. $pages) {
        my $data = substr($text, 20000 * ($i % 18), 40000) . "page $i\n";
        spew("$sd/htdocs/p$i.html", $data);
        chmod 0644, "$sd/htdocs/p$i.html";
        utime $mtime, $mtime, "$sd/htdocs/p$i.html";
        my $hr = scratch_hit($url, "/p$i.html", $c, 30);
        $hits++ if ($hr->header('ETag') // '') =~ /-cache\./
                   && decode_body($hr) eq $data;
        my ($avail) = `df -B1 --output=avail '$sd/c'` =~ /(\d+)\s*$/;
        $min_avail = $avail if defined $avail && $avail < $min_avail;
    }
    my $st = status_json($url);
    ok t_cmp($ok ? 1 : 0, 1, 'a 600 KB tmpfs as the cache');
    ok t_cmp($hits, $pages, "every new file cached in turn ($pages of 40 KB)");
    ok t_cmp($st->{cache}{evictions} > 0 ? 1 : 0, 1,
             "older entries evicted to make room ($st->{cache}{evictions})");
    ok t_cmp($min_avail >= 600 * 1024 / 20 ? 1 : 0, 1,
             "a twentieth left free (least seen: $min_avail bytes)");
    ok t_cmp(slurp("$sd/error_log") =~ /ADF00022/ ? 1 : 0, 0,
             'no write failed');
    stop_scratch_server($sd);
    system('umount', '-l', "$sd/c");
}

# MAXSIZE 64k under churn: 600 requests over 40 pages.  Evicted entries
# are deleted at once, so the directory never holds much more than MAXSIZE
# (one entry being written, besides).
{
    my $sd = tempdir(CLEANUP => 1);
    make_path("$sd/c");
    chown $nobody, $nogroup, "$sd/c";
    chmod 0700, "$sd/c";
    my $url = cache_server($sd, "$sd/c", '64k');
    for my $i (1 .. 40) {
        spew("$sd/htdocs/q$i.html", substr($text, 5000 * $i, 12000));
        chmod 0644, "$sd/htdocs/q$i.html";
        utime $mtime, $mtime, "$sd/htdocs/q$i.html";
    }
    my ($max, $largest) = (0, 0);
    for my $round (1 .. 15) {
        for my $i (1 .. 40) {
            $ua->get("$url/q$i.html", 'Accept-Encoding' => $c);
            my $sum = 0;
            opendir my $d, "$sd/c" or die;
            for (readdir $d) {
                my $size = -s "$sd/c/$_" or next;
                $sum += $size;
                $largest = $size if $size > $largest;
            }
            closedir $d;
            $max = $sum if $sum > $max;
        }
    }
    ok t_cmp($max <= 64 * 1024 + 2 * $largest ? 1 : 0, 1,
             "MAXSIZE 64k held under churn (most seen: $max bytes, largest file $largest)");
    ok t_cmp(status_json($url)->{cache}{evictions} > 0 ? 1 : 0, 1,
             'entries were evicted');
    stop_scratch_server($sd);
}
