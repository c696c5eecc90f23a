# zstd (RFC 9659): negotiated by q-value and server preference, with the
# HTTP semantics of every coding (Vary, its own ETag, 304, HEAD), windows
# an HTTP client accepts, and .zst siblings.  A build without zstd never
# sends it, and a .zst file there is a file like any other.
# Configuration: t/conf/features/zstd.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Copy qw(copy);
use ADFTest;

plan tests => 31;

idle();
my $root = docroot();
mkdir "$root/zst";
my $page = slurp("$root/index.html");
spew("$root/zst/page.html", $page);
copy("$root/big.txt", "$root/zst/big.txt") or die "copy: $!";
spew("$root/zst/sib.html", $page);
chmod 0644, glob("$root/zst/*");
# In the past: a file changed within the last second gets a weak ETag, a
# second later a strong one (the HEAD below would see another tag).
my $old = time - 1000;
utime $old, $old, glob("$root/zst/*");
make_sibling("$root/zst/sib.html", 'zstd');

my $z = built('zstd');

# ---- negotiation (server preference here: br zstd gzip, of those built;
# ---- without zstd the server-wide gzip br) -----------------------------------
my @cases = (   # AE, with br and zstd, with zstd only, without zstd
    [ 'zstd', 'zstd', 'zstd', undef ],
    [ 'gzip, zstd', 'zstd', 'zstd', 'gzip' ],
    [ 'zstd;q=0.5, gzip', 'gzip', 'gzip', 'gzip' ],
    [ 'br;q=0, *', 'zstd', 'zstd', 'gzip' ],
    [ 'zstd;q=0', undef, undef, undef ],
    [ '*', 'br', 'zstd', 'gzip' ],
    [ 'ZSTD', 'zstd', 'zstd', undef ],
);
for my $c (@cases) {
    my ($r, $n) = fetch_noted('/zst/page.html', $c->[0]);
    my $want = $c->[!$z ? 3 : built('br') ? 1 : 2];
    ok t_cmp($r->header('Content-Encoding'), $want, "AE $c->[0]");
    # none accepted: the reason says so
    ok t_cmp(join(' ', $r->code, $n->{coding},
                  defined $want ? () : $n->{reason}),
             '200 ' . ($want // 'identity not-accepted'),
             "AE $c->[0]: status, coding (and reason)");
}

# ---- the representation ------------------------------------------------------
my $r = fetch('/zst/page.html', 'Accept-Encoding' => 'zstd');
ok t_cmp(decode_body($r), $page, 'decodes');
ok t_cmp(vary_count($r), 1, 'Vary once');
my $etag = $r->header('ETag');
my $identity_tag = qr{^(W/)?"[^"-]+-[^"-]+"$};
ok t_cmp($etag, $z ? qr/-ad-zstd"$/ : $identity_tag,
         $z ? 'its own ETag' : "the file's own ETag");
my $r304 = fetch('/zst/page.html', 'Accept-Encoding' => 'zstd',
                 'If-None-Match' => $etag);
ok t_cmp($r304->code, 304, 'revalidates');
ok t_cmp($r304->header('ETag'), $etag);
my $h = head('/zst/page.html', 'Accept-Encoding' => 'zstd');
for my $name (qw(Content-Encoding Vary ETag)) {
    ok t_cmp($h->header($name), $r->header($name), "HEAD $name");
}
# 10 MB at the top of the range: still within an 8 MB window.
$r = fetch('/zst/big.txt', 'Accept-Encoding' => 'zstd');
ok t_cmp($r->header('Content-Encoding'), if_built('zstd', undef), '10 MB body');
my $body = decode_body($r);
ok defined $body && $body eq slurp("$root/big.txt");

# ---- siblings ----------------------------------------------------------------
my $zst = slurp("$root/zst/sib.html.zst");
$r = fetch('/zst/sib.html', 'Accept-Encoding' => 'zstd');
ok t_cmp($r->header('Content-Encoding'), if_built('zstd', undef), '.zst sibling');
ok $r->content eq ($z ? $zst : $page);
ok t_cmp($r->header('ETag'), $z ? qr/-ad-zstd-pre\.[0-9a-f]{16}"$/ : $identity_tag,
         "the sibling's ETag");
ok t_cmp(note_for(qr{^GET /zst/sib.html })->{reason},
         $z ? 'precompressed' : 'not-accepted');
# Without zstd a .zst is a file of its own, as it is without this module.
$r = fetch('/zst/sib.html.zst');
ok t_cmp($r->code . ($z ? '' : $r->content eq $zst ? ' as is' : ' changed'),
         $z ? 404 : '200 as is', 'not a resource of its own');
$r = fetch('/zst/sib.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'gzip on the fly beside it');
ok t_cmp(vary_count($r), 1);
