# Precompressed siblings: served when fresh and accepted, through the
# static path (own length, ETag, 304, Range, HEAD), never around access
# control or symlink rules, never when stale or not a readable file.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Path qw(make_path);
use POSIX qw(mkfifo);
use ADFTest;

plan tests => 55;

my $root = docroot();
my $dir = "$root/static";
make_path("$dir/links", "$dir/ownerlinks");
my $orig = slurp("$root/index.html");
my $old = time - 1000;

sub gz { my $d = shift; open my $p, '|-', "gzip -9n > '$_[0]'" or die; print $p $d; close $p }
sub br { my ($d, $f) = @_; spew("$f.src", $d); system("brotli -q 11 -f -o '$f' '$f.src'") == 0 or die; unlink "$f.src" }

# page.html with both siblings, all fresh.
for my $name (qw(page index gzonly secret stale dir fifo unreadable)) {
    spew("$dir/$name.html", $orig);
    utime $old, $old, "$dir/$name.html";
}
gz($orig, "$dir/page.html.gz");
br($orig, "$dir/page.html.br");
br($orig, "$dir/index.html.br");
gz($orig, "$dir/gzonly.html.gz");
gz($orig, "$dir/secret.html.gz");
# Decoys: siblings that must not be served decode to this marker.
my $decoy = "DECOY sibling\n" x 40;
gz($decoy, "$dir/stale.html.gz");
utime $old - 100, $old - 100, "$dir/stale.html.gz";
mkdir "$dir/dir.html.gz";
mkfifo("$dir/fifo.html.gz", 0644) or die "mkfifo: $!";
gz($decoy, "$dir/unreadable.html.gz");
chmod 0000, "$dir/unreadable.html.gz";
# Symlinked siblings: allowed under FollowSymLinks, refused without it,
# and under SymLinksIfOwnerMatch only when owners match.
gz($orig, "$dir/target.gz");
gz($decoy, "$dir/decoy.gz");
for my $sub (qw(links ownerlinks)) {
    spew("$dir/$sub/a.html", $orig);
    utime $old, $old, "$dir/$sub/a.html";
    symlink('../target.gz', "$dir/$sub/a.html.gz") or die "symlink: $!";
}
spew("$dir/nolink.html", $orig);
utime $old, $old, "$dir/nolink.html";
symlink('decoy.gz', "$dir/nolink.html.gz") or die "symlink: $!";
spew("$dir/ownerlinks/b.html", $orig);
utime $old, $old, "$dir/ownerlinks/b.html";
gz($decoy, "$dir/other-owner.gz");
my $nobody = (getpwnam('nobody'))[2];
chown $nobody, -1, "$dir/other-owner.gz" if $> == 0;
symlink('../other-owner.gz', "$dir/ownerlinks/b.html.gz") or die;
system("chmod -R a+rX '$dir'; chmod 0000 '$dir/unreadable.html.gz'");

my $gzfile = slurp("$dir/page.html.gz");
my $brfile = slurp("$dir/page.html.br");

# ---- the sibling is served as is ----------------------------------------
my $r = fetch('/static/page.html', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), 'br', 'br sibling');
ok $r->content eq $brfile;
ok t_cmp($r->header('Content-Length'), length($brfile), 'sibling length');
ok t_cmp($r->header('Content-Type'), qr{^text/html}, "F's type");
ok t_cmp(vary_count($r), 1, 'Vary');
ok t_cmp(unbrotli($r->content), $orig, 'decodes to F');
my $br_etag = $r->header('ETag');
$r = fetch('/static/page.html?notes', 'Accept-Encoding' => 'br');
my $n = note_for(qr{^GET /static/page.html\?notes });
ok t_cmp("$n->{coding} $n->{reason}", 'br precompressed', 'sibling notes');

$r = fetch('/static/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'gz sibling');
ok $r->content eq $gzfile;
ok t_cmp($r->header('Content-Length'), length($gzfile));
my $gz_etag = $r->header('ETag');

$r = fetch('/static/page.html');
ok !defined $r->header('Content-Encoding');
ok $r->content eq $orig;
ok t_cmp(vary_count($r), 1, 'identity answer varies too');
my $id_etag = $r->header('ETag');
ok $br_etag ne $gz_etag && $br_etag ne $id_etag && $gz_etag ne $id_etag;

# ---- q-values, then server preference (br gzip) ----------------------------
my @choice = (
    [ 'gzip, br', 'br' ],
    [ 'gzip;q=1, br;q=0.5', 'gzip' ],
    [ 'br;q=0, gzip', 'gzip' ],
    [ 'gzip;q=0.5, br;q=0.5', 'br' ],
    [ '*', 'br' ],
    [ 'identity', undef ],
);
for my $c (@choice) {
    $r = fetch('/static/page.html', 'Accept-Encoding' => $c->[0]);
    ok t_cmp($r->header('Content-Encoding'), $c->[1], "AE $c->[0]");
}

# ---- 304, HEAD, Range over the sibling's bytes -------------------------------
$r = fetch('/static/page.html', 'Accept-Encoding' => 'br',
           'If-None-Match' => $br_etag);
ok t_cmp($r->code, 304, 'If-None-Match -> 304');
ok t_cmp(vary_count($r), 1, '304 with Vary');
my $lm = fetch('/static/page.html', 'Accept-Encoding' => 'br')
    ->header('Last-Modified');
$r = fetch('/static/page.html', 'Accept-Encoding' => 'br',
           'If-Modified-Since' => $lm);
ok t_cmp($r->code, 304, 'If-Modified-Since -> 304');
my $g = fetch('/static/page.html', 'Accept-Encoding' => 'br');
my $h = head('/static/page.html', 'Accept-Encoding' => 'br');
for my $name (qw(Content-Encoding Content-Length ETag Vary Content-Type)) {
    ok t_cmp($h->header($name), $g->header($name), "HEAD $name");
}
$r = fetch('/static/page.html', 'Accept-Encoding' => 'br',
           'Range' => 'bytes=0-9');
ok t_cmp($r->code, 206, 'Range -> 206');
ok t_cmp($r->header('Content-Range'), 'bytes 0-9/' . length($brfile));
ok $r->content eq substr($brfile, 0, 10);

# ---- index files ----------------------------------------------------------------
$r = fetch('/static/', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), 'br', 'index.html.br for /static/');
ok t_cmp(unbrotli($r->content), $orig);

# ---- fall back to on-the-fly when a sibling is missing, stale or unusable ------
$r = fetch('/static/gzonly.html', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), 'br', 'no .br: brotli on the fly');
ok t_cmp(unbrotli($r->content), $orig);
$r = fetch('/static/gzonly.html', 'Accept-Encoding' => 'gzip, br');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'only .gz exists: served');
ok $r->content eq slurp("$dir/gzonly.html.gz");

for my $case (qw(stale dir fifo unreadable nolink ownerlinks/b)) {
    $r = fetch("/static/$case.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->code, 200, "$case: 200");
    ok t_cmp(decode_body($r), $orig, "$case: not the sibling");
}
my $log = slurp(serverroot() . '/logs/error_log');
ok t_cmp($log, qr/ignoring \S*stale\.html\.gz: older than/, 'stale logged');
my $count = () = $log =~ /ignoring \S*stale\.html\.gz/g;
fetch('/static/stale.html', 'Accept-Encoding' => 'gzip');
my $log2 = slurp(serverroot() . '/logs/error_log');
my $count2 = () = $log2 =~ /ignoring \S*stale\.html\.gz/g;
ok $count2 <= $count + 1;       # once per process, not per request

# ---- symlinks allowed ----------------------------------------------------------
$r = fetch('/static/links/a.html', 'Accept-Encoding' => 'gzip');
ok $r->content eq slurp("$dir/target.gz");
$r = fetch('/static/ownerlinks/a.html', 'Accept-Encoding' => 'gzip');
ok $r->content eq slurp("$dir/target.gz");

# ---- access control is decided for F ---------------------------------------------
$r = fetch('/static/secret.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->code, 403, 'denied F: denied sibling');
$r = fetch('/static/secret.html.gz');
ok t_cmp($r->code, 200, 'the sibling itself follows its own rules');
