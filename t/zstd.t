# zstd (RFC 9659): negotiated by q-value and server preference, with the
# HTTP semantics of every coding (Vary, its own ETag, 304, HEAD), windows
# an HTTP client accepts, and .zst siblings.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Copy qw(copy);
use ADFTest;

plan tests => 24;

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

# ---- negotiation (server preference here: br zstd gzip) ----------------------
my @cases = (
    [ 'zstd', 'zstd' ],
    [ 'gzip, zstd', 'zstd' ],
    [ 'zstd;q=0.5, gzip', 'gzip' ],
    [ 'br;q=0, *', 'zstd' ],
    [ 'zstd;q=0', undef ],
    [ '*', 'br' ],
    [ 'ZSTD', 'zstd' ],
);
for my $c (@cases) {
    my $r = fetch('/zst/page.html', 'Accept-Encoding' => $c->[0]);
    ok t_cmp($r->header('Content-Encoding'), $c->[1], "AE $c->[0]");
}

# ---- the representation ------------------------------------------------------
my $r = fetch('/zst/page.html', 'Accept-Encoding' => 'zstd');
ok t_cmp(decode_body($r), $page, 'decodes');
ok t_cmp(vary_count($r), 1, 'Vary once');
my $etag = $r->header('ETag');
ok t_cmp($etag, qr/-ad-zstd"$/, 'its own ETag');
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
ok t_cmp($r->header('Content-Encoding'), 'zstd', '10 MB body');
my $body = decode_body($r);
ok defined $body && $body eq slurp("$root/big.txt");

# ---- siblings ----------------------------------------------------------------
$r = fetch('/zst/sib.html', 'Accept-Encoding' => 'zstd');
ok t_cmp($r->header('Content-Encoding'), 'zstd', '.zst sibling');
ok $r->content eq slurp("$root/zst/sib.html.zst");
ok t_cmp($r->header('ETag'), qr/-ad-zstd-pre"$/, "the sibling's ETag");
ok t_cmp(note_for(qr{^GET /zst/sib.html })->{reason}, 'precompressed');
ok t_cmp(fetch('/zst/sib.html.zst')->code, 404, 'not a resource of its own');
$r = fetch('/zst/sib.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'gzip on the fly beside it');
ok t_cmp(vary_count($r), 1);
