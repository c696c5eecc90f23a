# What a response coded against a dictionary costs, and deltas kept.
#
# A version kept as a dictionary is used only where the controller can
# pay for what it costs: a small file whose pattern (chunk-*.js) also
# covers a large kept version is not coded against it on the fly (its
# preparation would cost hundreds of times the response); its delta is
# made once by the cache worker, kept as an entry and served as one, under
# load too.  A configured dictionary's size bounds the levels it may be
# used at, at start-up.  A build without zstd sends nothing as dcz: the
# same requests assert that.  Configuration:
# t/conf/features/dictcost.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Path ();
use File::Temp qw(tempdir);
use ADFTest;

plan tests => 12;

my $z = built('zstd');
my $root = docroot();
my $dir = "$root/cache/dc";
my $ae = 'gzip, deflate, br, zstd, dcz';
my $c1 = if_built('br', 'gzip');
File::Path::make_path($dir);
idle();

# JavaScript-like text: $n bytes, the same for the same seed.
sub script {
    my ($seed, $n) = @_;
    my ($s, $x) = ('', $seed);
    while (length $s < $n) {
        $x = ($x * 1103515245 + 12345) % 2147483648;
        $s .= sprintf "export function f%d(a, b) { return a * %d + b; }\n",
                      $x % 5000, $x % 97;
    }
    return substr $s, 0, $n;
}

sub deploy { deploy_file($dir, @_) }

sub body_of {
    my ($r, $d) = @_;
    my $ce = $r->header('Content-Encoding') // '';
    return $ce eq 'dcz' ? undcz($r->content, $d) : decode_as($ce, $r->content);
}

sub coded {
    my ($r) = @_;
    return ($r->header('Content-Encoding') // '') eq 'dcz' ? 'dcz' : 'not dcz';
}

# ---- a version far larger than the response --------------------------------------
# A bundle's chunks share one pattern: the large one (480 KB, within the
# test cache's per-file limit) is kept, and the small one (2 KB) names it.
my $big = script(1, 480 * 1024);
my $small = substr($big, 1000, 2048);
deploy('chunk-1a2b3c4d.js', $big);
sleep 3;       # settled: the worker reads no file changed in the last 2 s
my ($r, $n) = wait_hit('/cache/dc/chunk-1a2b3c4d.js', $c1);
$r = wait_advertised('/cache/dc/chunk-1a2b3c4d.js', $ae, $z);
ok t_cmp($r->header('Use-As-Dictionary') // '-',
         $z ? 'match="/cache/dc/chunk-*.js"' : '-',
         'a large chunk kept and advertised under the chunks\' pattern');
deploy('chunk-9f8e7d6c.js', $small);
sleep 3;
my @held = ('Available-Dictionary' => available_dictionary($big));
($r, $n) = fetch_noted('/cache/dc/chunk-9f8e7d6c.js', $ae, @held);
ok t_cmp(join(' ', coded($r), (body_of($r, $big) // '') eq $small
              ? 'decodes' : 'does not decode'),
         'not dcz decodes',
         'a 2 KB chunk naming the 480 KB one: not coded against it on the '
         . 'fly (preparing it would cost 240 times the response)');

# ---- its delta, kept -------------------------------------------------------------
# The worker makes the pair's dcz body once and keeps it: then it is a
# cache hit.
my $hit = wait_for(sub {
    ($r, $n) = fetch_noted('/cache/dc/chunk-9f8e7d6c.js', $ae, @held);
    coded($r) eq 'dcz' && ($n->{cache} // '') eq 'hit';
}, $z ? 60 : 3, 1);
ok t_cmp($hit ? 'kept' : 'not kept', $z ? 'kept' : 'not kept',
         '... its delta is made once and served from the cache');
ok t_cmp(body_of($r, $big) // '(does not decode)', $small,
         '... which decodes against the large one to the small one');
ok t_cmp(length($r->content) < length($small) / 4 ? 1 : !$z, 1,
         '... in a fraction of its bytes (' . length($r->content) . ')');
my $etag = $r->header('ETag') // '';
ok t_cmp(join(' ', $z ? $etag : '"x-ad-dcz-cache.0123456789abcdef"',
              ($r->header('Vary') // '') =~ /Available-Dictionary/i || !$z
              ? 'varies' : 'does not vary'),
         qr/^"[^"]*-ad-dcz-cache\.[0-9a-f]{16}" varies$/,
         '... under a strong tag of its own bytes, varying on the '
         . 'dictionary');

# A returning visitor under the CPU limit: the delta still, at a hit's
# cost.
set_load(99);
wait_for(sub { status_json()->{load}{limited} }, 20);
($r, $n) = fetch_noted('/cache/dc/chunk-9f8e7d6c.js', $ae, @held);
ok t_cmp(join(' ', coded($r), $n->{reason} // '-'),
         $z ? 'dcz cache-hit' : 'not dcz cache-hit',
         'under the CPU limit: the kept delta');
ok t_cmp(body_of($r, $big) // '(does not decode)', $small, '... which decodes');
$r = fetch('/cache/dc/chunk-9f8e7d6c.js', 'Accept-Encoding' => $ae, @held,
           'If-None-Match' => $etag);
ok t_cmp($z ? $r->code : 304, 304, '... and revalidates');
# a client that holds no dictionary: the usual stored bytes
($r, $n) = fetch_noted('/cache/dc/chunk-9f8e7d6c.js', $ae);
ok t_cmp(join(' ', coded($r), decode_as($r->header('Content-Encoding') // '',
                                        $r->content) eq $small ? 1 : 0),
         'not dcz 1', '... not for a client without the dictionary');
idle();

# ---- a configured dictionary's levels ------------------------------------------
# Preparing 16 MB takes about 9 ns a byte at level 9 and 285 at 19 (4.6 s
# in every server process): levels above what a dictionary's size allows
# fail start-up, naming the directive, its file and line.
my $tmp = tempdir(CLEANUP => 1);
spew("$tmp/big.dict", script(2, 16 * 1024 * 1024));
my $conf = "AdaptiveDeflateDictionary /d.dict \"$tmp/big.dict\" match=/*\n";
my ($rc, $out, $file, $line) = config_check($tmp,
    $conf . "AdaptiveDeflateDczLevels 1 19\n");
$line++;
# A build without zstd refuses the dictionary itself, naming it.
my $refused = qr/AdaptiveDeflateDictionary: this build has no zstd/;
ok t_cmp($out, $z ? qr/AdaptiveDeflateDczLevels \(\Q$file:$line\E\) allows level 19, but the dictionary \Q$tmp\E\/big\.dict .*up to level 9/
                  : $refused,
         'a 16 MB dictionary at level 19: start-up fails naming the '
         . 'directive, its file and line');
($rc, $out) = config_check($tmp, $conf . "AdaptiveDeflateDczLevels 1 9\n");
ok t_cmp($z ? "$rc" : $out, $z ? '0' : $refused,
         "... at levels 1 to 9 it starts: $out");
