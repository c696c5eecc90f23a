# HTTP semantics of compressed responses: ETag and conditionals (and a
# backend's own validators left alone), HEAD, Range, no-transform,
# environment switches, subrequests, statuses, proxies and
# Accept-Encoding negotiation.  Every response left as it is says why
# (its adaptive_deflate_reason note).  Configuration:
# t/conf/features/semantics.conf.in (sub/: config.conf.in).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use ADFTest;

plan tests => 120;

my $root = docroot();
my $page = slurp("$root/index.html");
my $url = '/index.html';

# ---- ETag, If-None-Match, If-Match -----------------------------------
my $plain = fetch($url);
my $gz = fetch($url, 'Accept-Encoding' => 'gzip');
my $etag = $plain->header('ETag');
my $gz_etag = $gz->header('ETag');
ok defined $etag && defined $gz_etag;
# Weak: its bytes follow the level, which follows the load (RFC 9110,
# 8.8.1); the identity one names the file's bytes.
ok t_cmp($gz_etag, qr{^W/"[^"]*-ad-gzip"$}, 'compressed ETag is marked, weak');
ok t_cmp($etag, qr/^"/, 'the identity ETag is strong');
ok $gz_etag ne "W/$etag";

my $r304 = fetch($url, 'Accept-Encoding' => 'gzip',
                 'If-None-Match' => $gz_etag);
ok t_cmp($r304->code, 304, 'If-None-Match with the gzip ETag -> 304');
ok t_cmp($r304->header('ETag'), $gz_etag, '304 names the gzip ETag');
ok t_cmp(vary_count($r304), 1, '304 carries Vary');

$r304 = fetch($url, 'If-None-Match' => $etag);
ok t_cmp($r304->code, 304, 'identity ETag revalidates too');
ok t_cmp(vary_count($r304), 1, 'identity 304 carries Vary');

# A 304 says the copy the client's tag names is current: it repeats that
# tag, whatever would be sent now, or a cache's copy is relabelled as
# another representation (RFC 9110, 15.4.5).
$r304 = fetch($url, 'Accept-Encoding' => 'gzip', 'If-None-Match' => $etag);
ok t_cmp($r304->code . ' ' . ($r304->header('ETag') // 'none'), "304 $etag",
         'the identity tag from a gzip client: 304 with the identity tag');
if (built('br')) {
    # (a client that prefers br now, and would be sent br)
    $r304 = fetch($url, 'Accept-Encoding' => 'br, gzip;q=0.5',
                  'If-None-Match' => $gz_etag);
    ok t_cmp($r304->code . ' ' . ($r304->header('ETag') // 'none'),
             "304 $gz_etag", 'the gzip tag from a br client: 304 with the gzip tag');
}
else {
    ok 1;       # (no br: nothing else to send)
}
# Several tags: the 304 carries the one naming what would go out now.
$r304 = fetch($url, 'Accept-Encoding' => 'gzip',
              'If-None-Match' => "\"old\", $etag, $gz_etag");
ok t_cmp($r304->code . ' ' . ($r304->header('ETag') // 'none'),
         "304 $gz_etag", 'three tags held: 304 with the gzip one');
# A 304 on a date alone cannot name what the client holds: no tag.
$r304 = fetch($url, 'Accept-Encoding' => 'gzip',
              'If-Modified-Since' => $plain->header('Last-Modified'));
ok t_cmp($r304->code . ' ' . ($r304->header('ETag') // 'none'), '304 none',
         'If-Modified-Since alone: 304 without a tag');

my $r = fetch($url, 'Accept-Encoding' => 'gzip', 'If-None-Match' => '"nope"');
ok t_cmp($r->code, 200, 'unknown ETag -> 200');

# The gzip tag from a client that no longer takes gzip: its stored body is
# not one it may use, so it gets the body it accepts, not a 304.
my $n;
for my $ae ('identity', 'br;q=0, gzip;q=0, *;q=0, identity') {
    ($r, $n) = fetch_noted($url, $ae, 'If-None-Match' => $gz_etag);
    ok t_cmp($r->code, 200, "the gzip tag, Accept-Encoding: $ae -> 200");
    uncoded($r, $n, 200, 'not-accepted', '... as it is');
    ok $r->content eq $page;
}

# If-Match compares strongly (RFC 9110, 13.1.1): no weak tag passes.
$r = fetch($url, 'Accept-Encoding' => 'gzip', 'If-Match' => $gz_etag);
ok t_cmp($r->code, 412, 'If-Match with the (weak) gzip ETag -> 412');
$r = fetch($url, 'Accept-Encoding' => 'gzip', 'If-Match' => $etag);
ok t_cmp($r->code, 200, "If-Match with the handler's own tag -> 200");
ok t_cmp(decode_body($r), $page);
$r = fetch($url, 'Accept-Encoding' => 'gzip', 'If-Match' => '"other"');
ok t_cmp($r->code, 412, 'If-Match with another ETag -> 412');

my $br = fetch($url, 'Accept-Encoding' => 'br');
ok t_cmp($br->header('ETag'), built('br') ? qr{^W/.*-br"$} : $etag,
         'brotli ETag is marked (without brotli: the identity ETag)');
$r304 = fetch($url, 'Accept-Encoding' => 'br',
              'If-None-Match' => $br->header('ETag'));
ok t_cmp($r304->code, 304, 'brotli ETag revalidates');

# A validator the module did not make is not rewritten: a CGI that
# compresses its own body and makes its own "v1-gzip" tag (as a backend
# with mod_deflate does) sees that tag in If-None-Match, and answers 304.
$r = fetch('/cgi/selftag.cgi', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('ETag'), '"v1-gzip"', "sanity: the script's own tag");
$r = fetch('/cgi/selftag.cgi', 'Accept-Encoding' => 'gzip',
           'If-None-Match' => '"v1-gzip"');
ok t_cmp($r->code, 304, 'the script sees its own tag and answers 304 (saw: '
         . ($r->header('X-Seen-If-None-Match') // '') . ')');

# ---- ETags set by mod_headers ----------------------------------------------
# A compressed response never shares a tag with the identity one.
for my $d (qw(etagnontag etagalways etagadded)) {
    mkdir "$root/$d";
    spew("$root/$d/page.html", $page);
}
$r = fetch('/etagnontag/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'sanity: etagnontag compressed');
ok t_cmp(join(',', $r->header('ETag')), '',
         'a tag that is not quoted is dropped from a compressed response');
ok t_cmp(fetch('/etagnontag/page.html')->header('ETag'), 'abc',
         'and kept on the identity one');
$r = fetch('/etagalways/page.html', 'Accept-Encoding' => 'gzip');
my @tags = $r->header('ETag');
ok t_cmp(scalar(grep { m{^W/"al-[^"]*gzip"$} } @tags), 1,
         'Header always set ETag: that tag is marked (' . join(' | ', @tags) . ')');
ok t_cmp(scalar(grep { !/-gzip"$/ } @tags), 0,
         'Header always set ETag: no unmarked tag goes out with gzip');
$r = fetch('/etagadded/page.html', 'Accept-Encoding' => 'gzip');
@tags = $r->header('ETag');
ok t_cmp(join(' | ', sort { ($a =~ /ad2/) <=> ($b =~ /ad2/) } @tags),
         qr{^W/"[0-9a-f]+-[0-9a-f]+-ad-gzip" \| W/"ad2-ad-gzip"$},
         'Header add ETag twice: both tags marked, the line that is no tag dropped');
my $n304 = fetch('/etagadded/page.html', 'Accept-Encoding' => 'gzip',
                 'If-None-Match' => (grep { !/ad2/ } @tags)[0] // '"none"');
ok t_cmp($n304->code, 304, "Header add ETag twice: httpd's own tag, marked, revalidates");

# ---- HEAD equals GET -----------------------------------------------------
for my $coding (qw(gzip br identity)) {
    my @h = ('Accept-Encoding' => $coding);
    my $g = fetch($url, @h);
    my $h = head($url, @h);
    for my $name (qw(Content-Encoding Vary ETag Content-Type)) {
        ok t_cmp($h->header($name), $g->header($name), "HEAD $coding $name");
    }
    # The compressed length is only known by compressing, which a HEAD
    # does not do: it says nothing rather than something wrong.
    my $as_is = $coding eq 'identity' || !built($coding);
    ok t_cmp($h->header('Content-Length'),
             $as_is ? $g->header('Content-Length') : undef,
             "HEAD $coding Content-Length");
    ok t_cmp(length($h->content), 0, "HEAD $coding has no body");
}

# ---- Range on on-the-fly output: full 200, no ranges offered ------------
$r = fetch($url, 'Accept-Encoding' => 'gzip', 'Range' => 'bytes=0-9');
ok t_cmp($r->code, 200, 'Range on compressed output -> 200');
ok !defined $r->header('Content-Range');
ok !defined $r->header('Accept-Ranges');
ok t_cmp(decode_body($r), $page, 'full body');
$r = fetch($url, 'Range' => 'bytes=0-9');
ok t_cmp($r->code, 206, 'Range on identity still works');
ok t_cmp($r->content, substr($page, 0, 10));
# If-Range: only a strong tag equal to the response's (RFC 9110, 13.1.5).
# Every coding has the file's Last-Modified, so a date cannot say whose
# bytes the client's part is: all of it.
$r = fetch($url, 'Range' => 'bytes=0-9', 'If-Range' => $etag);
ok t_cmp($r->code, 206, 'If-Range with the identity tag: 206');
$r = fetch($url, 'Range' => 'bytes=0-9', 'If-Range' => "W/$etag");
ok t_cmp($r->code, 200, 'If-Range with a weak tag: 200');
$r = fetch($url, 'Range' => 'bytes=0-9', 'If-Range' => $gz_etag);
ok t_cmp($r->code, 200, "If-Range with the gzip tag, identity now: 200");
$r = fetch($url, 'Range' => 'bytes=0-9',
           'If-Range' => $plain->header('Last-Modified'));
ok t_cmp($r->code . ' ' . length($r->content), '200 ' . length($page),
         'If-Range with a date, on a response of several codings: all of it');

# ---- no-transform ----------------------------------------------------------
($r, $n) = fetch_noted($url, 'gzip',
                       'Cache-Control' => 'no-cache, no-transform');
uncoded($r, $n, 200, 'no-transform', 'request no-transform');
($r, $n) = fetch_noted('/cgi/notransform.cgi', 'gzip');
uncoded($r, $n, 200, 'no-transform', 'response no-transform');
ok t_cmp(vary_count($r), 0, 'response no-transform: no Vary');

# ---- environment switches ----------------------------------------------------
for my $ua (qw(NoGzipBot NoAdfBot)) {
    ($r, $n) = fetch_noted($url, 'gzip', 'User-Agent' => $ua);
    uncoded($r, $n, 200, 'env', $ua);
    ok t_cmp(vary_count($r), 1, "$ua: Vary");
}

# ---- subrequests: the included page is not compressed separately --------
$r = fetch('/ssi/page.shtml', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'SSI page compressed once');
my $body = decode_body($r) // '';
ok $body =~ /Before the include.*<h1>mod_adaptive_deflate<\/h1>.*After/s;

# ---- statuses --------------------------------------------------------------
$r = fetch('/statuses/missing.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->code, 404);
ok t_cmp($r->header('Content-Encoding'), 'gzip', '404 compressed when listed');
ok t_cmp(decode_body($r), slurp("$root/statuses/notfound.html"));
($r, $n) = fetch_noted('/missing-elsewhere.html', 'gzip');
# (httpd's own error page: the filter never decided, no note)
uncoded($r, $n, 404, '-', '404 not listed in AdaptiveDeflateStatuses');

# ---- proxies -------------------------------------------------------------------
($r, $n) = fetch_noted('/noproxy/page.html', 'gzip', 'Via' => '1.1 cache');
uncoded($r, $n, 200, 'proxied',
        'AdaptiveDeflateProxied Off: a reason of its own');
$r = fetch('/sub/page.html', 'Accept-Encoding' => 'gzip',
           'Via' => '1.1 cache');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'proxied by default');

# ---- negotiation ---------------------------------------------------------------
my @cases = (
    [ 'gzip;q=0', undef ],
    [ 'gzip;q=0, br;q=0', undef ],
    [ 'GZIP', 'gzip' ],
    [ '  gzip  ;  q=0.5 ,, deflate', 'gzip' ],
    [ 'x-gzip', 'gzip' ],
    [ '*', 'gzip' ],                    # server preference (gzip br here)
    [ '*;q=0, identity', undef ],
    [ 'identity;q=1, gzip;q=0.5', undef ],
    [ 'br;q=0.9, gzip;q=0.8', if_built('br', 'gzip') ],  # q beats server preference
    [ 'gzip;q=0.5, br;q=0.5', 'gzip' ], # tie: server preference
    [ 'br', if_built('br', undef) ],
    [ 'gzip;q=1e308', undef ],
    [ "gzip;q=\x01", undef ],
);
for my $c (@cases) {
    my ($ae, $want) = @$c;
    ($r, $n) = fetch_noted($url, $ae);
    ok t_cmp($r->header('Content-Encoding'), $want, "Accept-Encoding: $ae");
    # none accepted cleanly: the reason says so; a control byte in the
    # header may make httpd refuse the request itself (400: the module
    # never decides, no note)
    ok t_cmp(join(' ', $r->code, $n->{coding},
                  defined $want ? () : $n->{reason}),
             $ae =~ /[\x00-\x1f]/ ? qr/^(200 identity not-accepted|400 - -)$/
                                   : '200 ' . ($want // 'identity not-accepted'),
             "Accept-Encoding: $ae: status, coding (and reason)");
}
