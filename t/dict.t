# Dictionary transport (dcz, RFC 9842): a dictionary the operator names
# (AdaptiveDeflateDictionary, in the adf_dict virtual host) and the
# versions of static files the cache keeps (AdaptiveDeflateDictionaryVersions,
# in /cache/dv).  Every dcz body is decoded by the zstd command against the
# dictionary and compared with the identity body; every rule that says "no
# dictionary" must still give a decodable body.  A build without zstd
# sends nothing as dcz: the same requests assert that.
# Configuration: t/conf/features/dict.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestRequest ();
use Apache::TestUtil;
use Digest::SHA qw(sha256_hex);
use File::Path ();
use File::Temp ();
use ADFTest;

# A one-process server (ADF_VALGRIND=1) runs no scratch servers: the
# fleet's part (4 assertions) is left out of its plan.
my $one = $ENV{ADF_VALGRIND} ? 1 : 0;
plan tests => 34 + 13 + 20 + 4 + ($one ? 0 : 4);

my $z = built('zstd');
my $root = docroot();
my $dict = slurp("$root/dict/site.dict");
my $have = available_dictionary($dict);
my $ae = 'gzip, deflate, br, zstd, dcb, dcz';
idle();

# The body of a response, decoded as its Content-Encoding says (dcz
# against $d); undef when it does not decode.
sub body_of {
    my ($r, $d) = @_;
    my $ce = $r->header('Content-Encoding') // '';
    return $ce eq 'dcz' ? undcz($r->content, $d) : decode_as($ce, $r->content);
}

sub vary_has {
    my ($r, $token) = @_;
    return (grep { lc $_ eq lc $token } map { split /\s*,\s*/ }
            $r->header('Vary') // '') ? 1 : 0;
}

# ---- a dictionary the operator names ------------------------------------------
Apache::TestRequest::module('adf_dict');

my $r = fetch('/dictionaries/site.dict');
ok t_cmp($r->code, $z ? 200 : 404, 'the dictionary is served at its URL');
ok t_cmp($z ? $r->content : $dict, $dict, '... its bytes, exactly');
ok t_cmp($r->header('Use-As-Dictionary'), $z ? 'match="/dyn/*"' : undef,
         '... with Use-As-Dictionary and its pattern');
ok t_cmp($r->header('Cache-Control'), $z ? 'max-age=600' : undef,
         '... and a lifetime the client keeps it for');
my $dtag = $r->header('ETag');
ok t_cmp($dtag // '', $z ? '"adf-dict-' . substr(sha256_hex($dict), 0, 16) . '"'
                         : '', '... and a strong tag from its SHA-256');
$r = fetch('/dictionaries/site.dict', 'If-None-Match' => $dtag // '"x"');
ok t_cmp($r->code, $z ? 304 : 404, '... which revalidates');
$r = head('/dictionaries/site.dict');
ok t_cmp(join(' ', $r->code, $r->header('Content-Length') // '-',
              length($r->content)),
         $z ? '200 ' . length($dict) . ' 0' : '404 - 0', '... HEAD as GET');

# The page before the client holds it: Link to it, the usual coding,
# varying on the dictionary too.
my $page = fetch('/dyn/page.cgi?a=1')->content;
ok t_cmp(length($page) > 10000 ? 1 : 0, 1, 'the dynamic page, identity');
$r = fetch('/dyn/page.cgi?a=1', 'Accept-Encoding' => $ae);
# what goes out without a dictionary (the server's preference)
my $usual = $r->header('Content-Encoding') // '(none)';
ok t_cmp($r->header('Link') // '',
         $z ? '</dictionaries/site.dict>; rel="compression-dictionary"' : '',
         'an HTML page links to the dictionary');
ok t_cmp(join(' ', $usual ne 'dcz' && (body_of($r, $dict) // '') eq $page,
              vary_has($r, 'Accept-Encoding'),
              vary_has($r, 'Available-Dictionary')),
         '1 1 ' . ($z ? 1 : 0),
         "... goes out in the usual coding ($usual), varying on the "
         . 'dictionary');

# The client holds it: dcz, decoded against it.
my ($n, $br);
($br) = fetch_noted('/dyn/page.cgi?a=2', $ae);
($r, $n) = fetch_noted('/dyn/page.cgi?a=2', $ae,
                       'Available-Dictionary' => $have);
my $page2 = fetch('/dyn/page.cgi?a=2')->content;
ok t_cmp($r->header('Content-Encoding') // '-', $z ? 'dcz' : $usual,
         'a client that holds it gets dcz');
ok t_cmp(body_of($r, $dict) // '(does not decode)', $page2,
         '... which decodes against it to the page');
ok t_cmp(length($r->content) * 2 < length($br->content) ? 1 : !$z, 1,
         '... in fewer bytes than ' . $usual . ' (' . length($r->content)
         . ' against ' . length($br->content) . ')');
ok t_cmp($n->{dictionary} // '-', $z ? 'hit' : '-', '... noted as a hit');
ok t_cmp(join(' ', vary_has($r, 'Accept-Encoding'),
              vary_has($r, 'Available-Dictionary')), '1 ' . ($z ? 1 : 0),
         '... varying on both');
$r = head('/dyn/page.cgi?a=2', 'Accept-Encoding' => $ae,
          'Available-Dictionary' => $have);
ok t_cmp(join(' ', $r->header('Content-Encoding') // '-', length $r->content),
         ($z ? 'dcz' : $usual) . ' 0', '... HEAD as GET');
$r = fetch('/dyn/page.cgi?a=2', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => $have, 'Range' => 'bytes=0-99');
ok t_cmp(join(' ', $r->code, $r->header('Content-Encoding') // '-'),
         '200 ' . ($z ? 'dcz' : $usual), '... a range asked: the whole body');
ok t_cmp(body_of($r, $dict) // '(does not decode)', $page2, '... whole');

# A static page under the pattern: its tag names the dictionary, and a
# revalidation matches for the client holding that dictionary only.
spew("$root/dyn/static.html", $page2);
utime time - 100, time - 100, "$root/dyn/static.html";
$r = fetch('/dyn/static.html', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => $have);
my $etag = $r->header('ETag') // '';
ok t_cmp($etag, $z ? qr/-ad-dcz-\Q${\substr(sha256_hex($dict), 0, 16)}\E"$/
                   : qr/-ad-\Q$usual\E"$/,
         'a static page: a tag that names the dictionary');
$r = fetch('/dyn/static.html', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => $have, 'If-None-Match' => $etag);
ok t_cmp($r->code, 304, '... which revalidates');
$r = fetch('/dyn/static.html', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => available_dictionary('another'),
           'If-None-Match' => $etag);
ok t_cmp(join(' ', $r->code, $r->header('Content-Encoding') // '-'),
         $z ? "200 $usual" : '304 -',
         '... but not for a client that holds another dictionary now');

# ---- what a shared cache must be told --------------------------------------------
# dcz made on the fly: a weak tag, its bytes follow the level.  A 304
# repeats the tag the client holds, whatever would go out now.
my $sha16 = substr(sha256_hex($dict), 0, 16);
ok t_cmp($etag, $z ? qr{^W/"[^"]*-ad-dcz-$sha16"$} : qr{^W/"[^"]*-ad-},
         'the dcz tag is weak');
(my $plain_tag = $etag) =~ s{^(?:W/)?(".*)-ad-[^"]*"$}{$1"};
$r = fetch('/dyn/static.html', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => $have, 'If-None-Match' => $plain_tag);
ok t_cmp(join(' ', $r->code, $r->header('ETag') // 'none'), "304 $plain_tag",
         'the identity tag from a client holding the dictionary: 304 with it');
$r = fetch('/dyn/static.html', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => $have, 'If-None-Match' => $etag);
ok t_cmp(join(' ', $r->code, $r->header('ETag') // 'none'), "304 $etag",
         '... the dcz one: 304 with the dcz one');
# The fetch rule read Sec-Fetch-Site and Sec-Fetch-Mode: Vary names them,
# on the answers it gave and refused, or a cache would hand the stored
# dcz body to the cross-site no-cors request it refuses.
my @cross = ('Sec-Fetch-Site' => 'cross-site', 'Sec-Fetch-Mode' => 'no-cors');
for my $c ([ 'dcz', [] ], [ 'refused', [ @cross ] ]) {
    my ($what, $h) = @$c;
    $r = fetch('/dyn/static.html', 'Accept-Encoding' => $ae,
               'Available-Dictionary' => $have, @$h);
    ok t_cmp(join(' ', map { vary_has($r, $_) } qw(Sec-Fetch-Site Sec-Fetch-Mode)),
             $z ? '1 1' : '0 0', "$what: Vary names Sec-Fetch-Site and -Mode");
}
# A client that names no dictionary: the rule read nothing, Vary no more.
$r = fetch('/dyn/static.html', 'Accept-Encoding' => $ae, @cross);
ok t_cmp(vary_has($r, 'Sec-Fetch-Mode'), 0, '... not where no dictionary was named');
# Repeated or contradictory values (a field sent twice reaches httpd as one
# list) fail closed: no dcz.
for my $c ([ 'Sec-Fetch-Mode sent twice', [ 'Sec-Fetch-Site' => 'cross-site',
             'Sec-Fetch-Mode' => 'no-cors', 'Sec-Fetch-Mode' => 'no-cors' ] ],
           [ '"no-cors, cors" on one line', [ 'Sec-Fetch-Site' => 'cross-site',
             'Sec-Fetch-Mode' => 'no-cors, cors' ] ],
           [ 'Sec-Fetch-Site sent twice', [ 'Sec-Fetch-Site' => 'same-origin',
             'Sec-Fetch-Site' => 'cross-site', 'Sec-Fetch-Mode' => 'no-cors' ] ],
           [ 'a parameter on Sec-Fetch-Mode', [ 'Sec-Fetch-Site' => 'cross-site',
             'Sec-Fetch-Mode' => 'no-cors;x=1' ] ]) {
    my ($what, $h) = @$c;
    $r = fetch('/dyn/page.cgi?a=2', 'Accept-Encoding' => $ae,
               'Available-Dictionary' => $have, @$h);
    ok t_cmp(join(' ', ($r->header('Content-Encoding') // '') eq 'dcz' ? 'dcz' : 'not dcz',
                  (body_of($r, $dict) // '') eq $page2 ? 'decodes' : 'does not decode'),
             'not dcz decodes', "$what: fails closed");
}
# AdaptiveDeflateEncodings without dcz: none, and no Vary on the dictionary
File::Path::make_path("$root/dyn/nodcz");
spew("$root/dyn/nodcz/static.html", $page2);
($r, $n) = fetch_noted('/dyn/nodcz/static.html', $ae, 'Available-Dictionary' => $have);
ok t_cmp(join(' ', $r->header('Content-Encoding') // '-',
              vary_has($r, 'Available-Dictionary'),
              (decode_body($r) // '') eq $page2 ? 'decodes' : 'does not decode'),
         'gzip 0 decodes', 'AdaptiveDeflateEncodings gzip: gzip, never dcz');
# Use-As-Dictionary on a whole 200 only: a range of it (a 206, made after
# the module looked) is no dictionary; a HEAD carries it as its GET does.
$r = fetch('/dictionaries/site.dict', 'Range' => 'bytes=0-99');
ok t_cmp(join(' ', $r->code, $r->header('Use-As-Dictionary') // 'none'),
         $z ? '206 none' : '404 none', 'a range of the dictionary: no Use-As-Dictionary');
$r = head('/dictionaries/site.dict');
ok t_cmp($r->header('Use-As-Dictionary') // 'none', $z ? 'match="/dyn/*"' : 'none',
         "... a HEAD: the GET's fields");

# Where lengths are hidden (BREACH), only a coding that pads goes out.
File::Path::make_path("$root/dyn/lh");
spew("$root/dyn/lh/page.html", $page2);
($r, $n) = fetch_noted('/dyn/lh/page.html', $ae, 'Available-Dictionary' => $have);
ok t_cmp(join(' ', $r->header('Content-Encoding') // '-',
              (decode_body($r) // '') eq $page2 ? 'decodes' : 'does not decode'),
         'gzip decodes', 'length hiding: gzip, padded, not dcz');

# Every "no dictionary": the usual coding, decodable.
my @no = (
    [ 'a malformed hash', [ 'Available-Dictionary' => 'abc' ], '-' ],
    [ 'a hash of the wrong length',
      [ 'Available-Dictionary' => ':' . ('A' x 40) . ':' ], '-' ],
    [ 'two items', [ 'Available-Dictionary' => "$have, $have" ], '-' ],
    [ 'an unknown dictionary',
      [ 'Available-Dictionary' => available_dictionary('other') ],
      $z ? 'miss' : '-' ],
    [ 'dcz not accepted',
      [ 'Available-Dictionary' => $have ], '-', 'gzip, br, zstd' ],
    [ 'a cross-origin no-cors fetch',
      [ 'Available-Dictionary' => $have, 'Sec-Fetch-Mode' => 'no-cors',
        'Sec-Fetch-Site' => 'cross-site' ], $z ? 'miss' : '-' ],
    [ 'no-transform', [ 'Available-Dictionary' => $have,
                        'Cache-Control' => 'no-transform' ], '-' ],
);
for my $c (@no) {
    my ($what, $hdrs, $note, $a) = @$c;
    ($r, $n) = fetch_noted('/dyn/page.cgi?a=2', $a // $ae, @$hdrs);
    ok t_cmp(($r->header('Content-Encoding') // '') ne 'dcz'
             && (body_of($r, $dict) // '') eq $page2 ? 1 : 0, 1,
             "$what: not dcz, decodable");
}
ok t_cmp($n->{dictionary} // '-', '-', 'no-transform: not even looked up');
($r, $n) = fetch_noted('/dyn/page.cgi?a=2', $ae, 'Available-Dictionary' => $have,
                       'Sec-Fetch-Mode' => 'no-cors',
                       'Sec-Fetch-Site' => 'same-origin');
ok t_cmp($r->header('Content-Encoding') // '-', $z ? 'dcz' : $usual,
         'a same-origin no-cors fetch may use it');
# a path the pattern does not cover: not dcz, no Vary on it
($r, $n) = fetch_noted('/index.html', $ae, 'Available-Dictionary' => $have);
ok t_cmp(join(' ', $r->header('Content-Encoding') // '-',
              vary_has($r, 'Available-Dictionary')), "$usual 0",
         'a path outside its pattern: the usual coding, no Vary on it');

# The status page counts them.
my $st = status_json();
ok t_cmp(($st->{dictionary_hits} // 0) >= ($z ? 3 : 0)
         && ($st->{dictionary_misses} // 0) >= ($z ? 2 : 0) ? 1 : 0, 1,
         "the status page counts hits ($st->{dictionary_hits}) and misses "
         . "($st->{dictionary_misses})");
ok t_cmp(($st->{dictionary_saved_bytes} // 0) > ($z ? 1000 : -1) ? 1 : 0, 1,
         "... and the bytes saved ($st->{dictionary_saved_bytes})");

# ---- versions of static files ---------------------------------------------------
Apache::TestRequest::module('default');
my $dir = "$root/cache/dv";
my $c1 = if_built('br', 'gzip');       # the cache's first coding here
File::Path::make_path($dir);
# A release of a script: words in a pseudo-random order (br makes about a
# fifth of it), and the next release, a few of its lines edited.
my @words = qw(function return var const let if else for while this new
               null true false Object Array prototype length push call apply);
my $seed = 12345;
sub word { $seed = ($seed * 1103515245 + 12345) % 2147483648;
           $words[($seed >> 16) % @words] }
my $v1 = join '', map { my $i = $_;
                        "function f$i(a, b) { " . join(' ', map { word() } 1 .. 20)
                        . " }\n" } 1 .. 2000;
(my $v2 = $v1) =~ s/^(function f(\d+)\(a, b\) \{) /$2 % 97 ? "$1 " : "$1 return 42; "/mge;
sub deploy { deploy_file($dir, @_) }
deploy('app.js', $v1);
sleep 3;       # settled: the worker reads no file changed in the last 2 s
($r, $n) = wait_hit('/cache/dv/app.js', $c1);
ok t_cmp($n->{cache} // '-', 'hit', 'version 1 is cached');
# the version is kept once the worker has been at it: a hit says so
# The kept file holding $data (its bytes, then the record of where they
# were served and the 148-byte trailer), or undef: its name hashes the
# SHA-256 with the host and the file's path pattern.
sub kept {
    my ($data) = @_;
    for my $f (glob(serverroot() . '/adfcache/*.dict')) {
        my $b = slurp($f);
        return $f if length($b) >= length($data) + 148
                     && substr($b, 0, length $data) eq $data;
    }
    return undef;
}
ok t_cmp(kept($v1) ? 1 : 0, $z ? 1 : 0, '... and kept as a dictionary');
my $cd = status_json()->{cache}{dirs}[0];
ok t_cmp(($cd->{dictionaries} // 0) >= ($z ? 1 : 0)
         && ($cd->{dictionary_bytes} // 0) >= ($z ? length $v1 : 0) ? 1 : 0, 1,
         "the status page counts the store ($cd->{dictionaries} dictionaries, "
         . "$cd->{dictionary_bytes} bytes)");
($r, $n) = fetch_noted('/cache/dv/app.js', $ae);
ok t_cmp($r->header('Use-As-Dictionary') // '-',
         $z ? 'match="/cache/dv/app.js"' : '-',
         '... advertised under its own path');
ok t_cmp(join(' ', vary_has($r, 'Accept-Encoding'),
              vary_has($r, 'Available-Dictionary')), '1 ' . ($z ? 1 : 0),
         '... varying on the dictionary');
# a range of it is no dictionary: no Use-As-Dictionary on the 206
($r, $n) = fetch_noted('/cache/dv/app.js', $ae, 'Range' => 'bytes=0-99');
ok t_cmp(join(' ', $r->code, $r->header('Use-As-Dictionary') // 'none'),
         '206 none', '... but not on a range of it');

# version 2 replaces it in place: dcz against version 1
deploy('app.js', $v2);
($br) = fetch_noted('/cache/dv/app.js', $c1);
($r, $n) = fetch_noted('/cache/dv/app.js', $ae,
                       'Available-Dictionary' => available_dictionary($v1));
ok t_cmp($r->header('Content-Encoding') // '-', $z ? 'dcz' : $usual,
         'version 2 against version 1: dcz');
ok t_cmp(body_of($r, $v1) // '(does not decode)', $v2, '... decodes to version 2');
ok t_cmp(length($r->content) * 10 < length($br->content) ? 1 : !$z, 1,
         '... a tenth of br or less (' . length($r->content) . ' against '
         . length($br->content) . ')');
ok t_cmp($n->{dictionary} // '-', $z ? 'hit' : '-', '... noted as a hit');
$etag = $r->header('ETag');
$r = fetch('/cache/dv/app.js', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => available_dictionary($v1),
           'If-None-Match' => $etag);
# (without zstd the tag may be an on-the-fly one, then the entry's)
ok t_cmp($z ? $r->code : ($r->code == 200 ? 304 : $r->code), 304,
         '... and revalidates');
$r = fetch('/cache/dv/app.js', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => available_dictionary('another'),
           'If-None-Match' => $etag);
# (without zstd the tag is no dcz one: a 304 there is right, or a 200
# where the tag was the on-the-fly one and the entry's is current)
ok t_cmp(join(' ', $z ? $r->code : ($r->code == 304 ? 200 : $r->code),
              ($r->header('Content-Encoding') // '') eq 'dcz'
              ? 'dcz' : 'not dcz'),
         '200 not dcz', '... but not for a client holding another dictionary');

# A version is kept for its own file's later versions only: another
# file's response never goes out against it (its bytes would otherwise
# tell whether the server holds a file with exactly those contents).
deploy('other.js', $v2);
($r, $n) = fetch_noted('/cache/dv/other.js', $ae,
                       'Available-Dictionary' => available_dictionary($v1));
ok t_cmp(join(' ', ($r->header('Content-Encoding') // '') eq 'dcz'
                  ? 'dcz' : 'not dcz', $n->{dictionary} // '-'),
         'not dcz ' . ($z ? 'miss' : '-'),
         "another file: not against this file's version");

# Under the CPU limit, stored bytes cost nothing: a client that holds
# version 1 gets version 2's cache entry (or its delta against version 1,
# once the worker kept it: dictcost.t), not a body coded on the fly, and
# never less than that.
wait_hit('/cache/dv/app.js', $c1);
set_load(99);
wait_for(sub { status_json()->{load}{limited} }, 20);
($r, $n) = fetch_noted('/cache/dv/app.js', $ae,
                       'Available-Dictionary' => available_dictionary($v1));
ok t_cmp(join(' ', $n->{cache} // '-', $n->{reason} // '-'),
         'hit cache-hit', 'under the CPU limit: the stored entry');
ok t_cmp(body_of($r, $v1) // '(does not decode)', $v2, '... which decodes');
idle();

# a versioned name: the version as "*", and the old file gone
deploy('lib-3f2a9c1b.js', $v1);
sleep 3;
wait_hit('/cache/dv/lib-3f2a9c1b.js', $c1);
# (a hit whose version the cache's LRU evicted queues it to be kept again)
$r = wait_advertised('/cache/dv/lib-3f2a9c1b.js', $ae, $z);
ok t_cmp($r->header('Use-As-Dictionary') // '-',
         $z ? 'match="/cache/dv/lib-*.js"' : '-',
         'a hashed name: advertised with its hash as *');
unlink "$dir/lib-3f2a9c1b.js";
deploy('lib-9c1b3f2a.js', $v2);
($r, $n) = fetch_noted('/cache/dv/lib-9c1b3f2a.js', $ae,
                       'Available-Dictionary' => available_dictionary($v1));
ok t_cmp(join(' ', $r->header('Content-Encoding') // '-',
              (body_of($r, $v1) // '') eq $v2 ? 'decodes' : 'does not decode'),
         ($z ? 'dcz' : $usual) . ' decodes',
         '... its next version against it, the old file gone');

# a kept version whose bytes changed on disk is not used, and removed
# at once: one warning, however many clients name it
# (version 1 is kept twice: for app.js, and for lib-*.js)
my @damaged;
while (my $file = kept($v1)) {
    open my $fh, '+<:raw', $file or die "$file: $!";
    seek $fh, 100, 0;
    print $fh 'X';
    close $fh;
    push @damaged, $file;
}
my $warned = log_count(qr/ADF00030/);
my %seen;
for (1 .. 50) {
    ($r, $n) = fetch_noted('/cache/dv/app.js', $ae,
                           'Available-Dictionary' => available_dictionary($v1));
    $seen{join ' ', ($r->header('Content-Encoding') // '') eq 'dcz'
                    ? 'dcz' : 'not dcz',
                    (body_of($r, $v1) // '') eq $v2 ? 'decodes'
                                                     : 'does not decode'}++;
}
ok t_cmp(join(', ', sort keys %seen), 'not dcz decodes',
         'a damaged kept version, named 50 times: the usual coding');
ok t_cmp(log_count(qr/ADF00030/) - $warned, $z ? 1 : 0,
         '... and one warning naming it');
ok t_cmp(scalar(grep { !-e } @damaged), $z ? 1 : 0,
         '... removed the first time (the other, for lib-*.js, not asked for)');

# Over the CPU target the worker compresses nothing, but a version is kept
# at once (a copy and a SHA-256): a deploy's new file is advertised
# within a few of its responses.
set_load(65);
wait_for(sub { (status_json()->{load}{raw} // 0) == 65 }, 10);
deploy('app.5d1e7f3a.js', $v2);
my $busy = !status_json()->{cache}{idle};
# (once a second, as wait_hit asks: the worker stays in its child)
my $advertised = wait_for(sub {
    (fetch('/cache/dv/app.5d1e7f3a.js', 'Accept-Encoding' => $ae)
         ->header('Use-As-Dictionary') // '') ne '';
}, 60, 1);
ok t_cmp(join(' ', $busy ? 'busy' : 'idle', $advertised ? 1 : 0),
         'busy ' . ($z ? 1 : 0),
         'over the CPU target, a new version is still kept and advertised');
idle();

# A file with precompressed siblings is kept like any other, and its
# version advertised on the sibling that carries it.
my $sib = "$root/cache/dvsib";
File::Path::make_path($sib);
page("$sib/app.js", $v1, qw(gzip br));
wait_for(sub {
    ($r) = fetch_noted('/cache/dvsib/app.js', $ae);
    !$z || defined $r->header('Use-As-Dictionary');
}, 60, 1);
ok t_cmp(join(' ', $r->header('Content-Encoding') // '-',
              $r->content eq slurp("$sib/app.js" . sibling_ext($c1))
              ? 'the sibling' : 'not the sibling',
              $r->header('Use-As-Dictionary') // '-'),
         "$c1 the sibling " . ($z ? 'match="/cache/dvsib/app.js"' : '-'),
         'a file with siblings: its sibling goes out, advertised');
page("$sib/app.js", $v2, qw(gzip br));
($r, $n) = fetch_noted('/cache/dvsib/app.js', $ae,
                       'Available-Dictionary' => available_dictionary($v1));
ok t_cmp(join(' ', $r->header('Content-Encoding') // '-',
              (body_of($r, $v1) // '') eq $v2 ? 'decodes' : 'does not decode'),
         ($z ? 'dcz' : $c1) . ' decodes',
         '... and its next version, siblings and all, goes out against it');

# elsewhere in the cache, versions are not kept: no field, no Vary on it
File::Path::make_path("$root/cache/dvoff");
spew("$root/cache/dvoff/app.js", $v1);
chmod 0644, "$root/cache/dvoff/app.js";
sleep 3;
($r) = wait_hit('/cache/dvoff/app.js', $c1);
ok t_cmp(join(' ', $r->header('Use-As-Dictionary') // '-',
              vary_has($r, 'Available-Dictionary')), '- 0',
         'where versions are off: no field, no Vary on the dictionary');

# ---- a fleet: two servers, one store ----------------------------------------------
# Two httpd instances share one cache directory, and their documents are
# at one path, as a deploy puts them on every node: the version node a
# kept is used by node b, which never served it (a load balancer sent the
# returning visitor there).
unless ($one) {
    my $tmp = File::Temp::tempdir(CLEANUP => 1);
    my $store = "$tmp/store";
    my $docs = "$tmp/site";
    my $nobody = (getpwnam('nobody'))[2];
    File::Path::make_path($store, "$docs/static");
    chmod 0755, $tmp, $docs, "$docs/static";
    chmod 0700, $store;
    chown $nobody, -1, $store if $> == 0;
    my %url;
    my $port = Apache::Test::vars('port');
    for my $node (qw(a b)) {
        my $d = "$tmp/$node";
        File::Path::make_path("$d/htdocs", "$d/logs");
        chmod 0755, $d, "$d/htdocs";
        chmod 0777, "$d/logs";
        spew("$d/load", "1\n");
        chmod 0644, "$d/load";
        local $ENV{ADF_SCRATCH_PORT} = ($ENV{ADF_SCRATCH_PORT} || $port + 50)
                                       + ($node eq 'a' ? 1 : 2);
        $url{$node} = scratch_server($d, 'event', <<"CONF");
LoadModule alias_module \@MODDIR\@/mod_alias.so
AdaptiveDeflate On
AdaptiveDeflateTypes text/javascript
AddType text/javascript .js
AdaptiveDeflateLoadSource file:$d/load
AdaptiveDeflateCache $store 4M
Alias /static $docs/static
<Directory "$docs/static">
    Require all granted
    AdaptiveDeflateDictionaryVersions On
</Directory>
CONF
    }
    # node a serves version 1, and keeps it
    spew("$docs/static/app.js", $v1);
    chmod 0644, "$docs/static/app.js";
    utime time - 100, time - 100, "$docs/static/app.js";
    sleep 3;
    my $ua = Apache::TestRequest::user_agent();
    my $advertised = wait_for(sub {
        ($ua->get("$url{a}/static/app.js", 'Accept-Encoding' => $ae)
             ->header('Use-As-Dictionary') // '') ne '';
    }, 60);
    ok t_cmp($advertised ? 1 : 0, $z ? 1 : 0,
             'fleet: node a keeps version 1 in the shared store');
    # version 2 is deployed; node b never served version 1
    spew("$docs/static/.app.js", $v2);
    chmod 0644, "$docs/static/.app.js";
    rename "$docs/static/.app.js", "$docs/static/app.js" or die "rename: $!";
    $r = $ua->get("$url{b}/static/app.js", 'Accept-Encoding' => $ae,
                  'Available-Dictionary' => available_dictionary($v1));
    ok t_cmp($r->header('Content-Encoding') // '-', $z ? 'dcz' : qr/./,
             'fleet: node b sends version 2 against it');
    ok t_cmp(body_of($r, $v1) // '(does not decode)', $v2,
             'fleet: ... which decodes to version 2');
    stop_scratch_server("$tmp/$_") for qw(a b);
    ok t_cmp(join('', map { slurp("$tmp/$_/error_log") =~ /\[(?:crit|alert|emerg)\]|Segmentation/ ? $_ : '' } qw(a b)),
             '', 'fleet: neither node logged a crash');
}
