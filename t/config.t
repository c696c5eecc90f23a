# Configuration: inheritance across vhost and directories, levels, and
# strict directive parsing (startup fails naming directive, file, line).
# Configuration: t/conf/features/config.conf.in (and extra.conf.in's
# server-wide defaults, which it checks are inherited).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use File::Temp qw(tempdir);
use ADFTest;

my @bad = (
    [ 'AdaptiveDeflateGzipLevels 6x 9',        "'6x' is not a whole number" ],
    [ 'AdaptiveDeflateGzipLevels 0 12',        'out of range' ],
    [ 'AdaptiveDeflateGzipLevels 9 1',         'MIN 9 is above MAX 1' ],
    [ 'AdaptiveDeflateMinLength 10q',          'not a size' ],
    [ 'AdaptiveDeflateMinLength -5',           'not a size' ],
    [ 'AdaptiveDeflateSizeLevels 64k:10',      'out of range' ],
    [ 'AdaptiveDeflateSizeLevels 64k',         'not SIZE:LEVEL' ],
    [ 'AdaptiveDeflateSizeLevels 1k:9 1k:4',   'repeats a size' ],
    [ 'AdaptiveDeflateEncodings gzip deflate', "unknown coding 'deflate'" ],
    [ 'AdaptiveDeflateEncodings gzip gzip',    'listed twice' ],
    [ 'AdaptiveDeflateStatuses 304',           'no body' ],
    [ 'AdaptiveDeflateStatuses 20x',           'not a whole number' ],
    [ 'AdaptiveDeflateLoadSource bogus',       'not a load source' ],
    [ 'AdaptiveDeflateLoadSource file:',       'not a load source' ],
    [ 'AdaptiveDeflateLoadInterval 10ms',      'out of range' ],
    [ 'AdaptiveDeflateLoadInterval 1h',        'not a duration' ],
    [ 'AdaptiveDeflateCPUTarget 100',          'between 1 and 99' ],
    [ 'AdaptiveDeflateCPUTarget 8O',           'not a percentage' ],
    [ 'AdaptiveDeflateCPULimit 80 90',         'must not be above' ],
    [ 'AdaptiveDeflateBandwidthTarget 800',    'not a rate' ],
    [ 'AdaptiveDeflateBandwidthTarget 1.5gbit', 'not a rate' ],
    [ 'AdaptiveDeflate maybe',                 'must be On or Off' ],
    [ 'AdaptiveDeflateTypes html',             'not a media type' ],
    [ "<VirtualHost 127.0.0.1:1>\nAdaptiveDeflateCPUTarget 50\n</VirtualHost>",
      'cannot occur within' ],
);

# The optional codings' directives: accepted where the build has the
# coding; where it has not, startup fails naming the directive and saying
# what the build has.
my @good = ('AdaptiveDeflateGzipLevels 1 9');
for my $c ([ 'br', 'AdaptiveDeflateBrotliQualities' ],
           [ 'zstd', 'AdaptiveDeflateZstdLevels' ]) {
    my ($coding, $levels) = @$c;
    if (built($coding)) {
        push @good, "$levels 1 3", "AdaptiveDeflateEncodings $coding gzip";
        push @bad, [ "$levels 0 20", 'out of range' ];
    }
    else {
        push @bad, [ "$levels 1 3", 'this build has no support for this coding' ],
                   [ "AdaptiveDeflateEncodings $coding",
                     "unknown coding '$coding' (this build has: gzip" ];
    }
}

# dcz (made with zstd against a dictionary the client holds) is listed
# like any other coding: a list without it produces none.
if (built('zstd')) {
    push @good, 'AdaptiveDeflateEncodings gzip dcz', 'AdaptiveDeflateEncodings dcz';
    push @bad, [ 'AdaptiveDeflateEncodings dcz gzip dcz', "'dcz' is listed twice" ];
}
else {
    push @bad, [ 'AdaptiveDeflateEncodings gzip dcz',
                 "unknown coding 'dcz' (this build has: gzip" ];
}

plan tests => 33 + @good + 3 * @bad + 3 * 2 + 1;

idle();

my $page = slurp(docroot() . '/index.html');

# ---- levels ------------------------------------------------------------------
my $r = fetch('/index.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(level9_bytes($r->content, '/index.html'), 'as small as level 9',
         'idle: the top of the levels');
$r = fetch('/level1/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(decode_body($r), $page, 'AdaptiveDeflateGzipLevels 1 1');
ok t_cmp(note_for(qr{^GET /level1/page.html })->{level}, 1, 'level note');

# ---- directory inheritance -----------------------------------------------------
my $n;
($r, $n) = fetch_noted('/tiny.html', 'gzip');
uncoded($r, $n, 200, 'min-length', 'the server\'s MinLength 100');
$r = fetch('/sub/deeper/tiny.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'sub/deeper inherits sub');
# 150 bytes: above the server's MinLength 100, below the default 256, in a
# directory that sets none of its own: the server's value holds there.
spew(docroot() . '/mid.html', 'm' x 150);
chmod 0644, docroot() . '/mid.html';
$r = fetch('/mid.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip',
         'a directory without MinLength inherits the server\'s 100');
ok t_cmp(decode_body($r), 'm' x 150);
# A client that accepts no coding is told why by the same MinLength: 150
# bytes are long enough here (the default 256 would say min-length).
($r, $n) = fetch_noted('/mid.html', undef);
uncoded($r, $n, 200, 'not-accepted', 'no Accept-Encoding, MinLength 100');
ok t_cmp($r->header('Vary'), 'Accept-Encoding', 'no Accept-Encoding: Vary');
($r, $n) = fetch_noted('/tiny.html', undef);
uncoded($r, $n, 200, 'min-length', 'no Accept-Encoding, below MinLength');
$r = fetch('/sub/deeper/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(level9_bytes($r->content, '/sub/deeper/page.html'),
         'as small as level 9', 'sub/deeper keeps the server levels');

# ---- a vhost that sets only the levels keeps the rest ---------------------------
Apache::TestRequest::module('adf_vhost');
$r = fetch('/index.html?vhost', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'vhost compresses');
ok t_cmp(note_for(qr{^GET /index.html\?vhost })->{level}, 1,
         'vhost level 1');
ok t_cmp(decode_body($r), $page);
($r, $n) = fetch_noted('/style.css', 'gzip');
uncoded($r, $n, 200, 'type', 'vhost: the inherited type list');
($r, $n) = fetch_noted('/tiny.html', 'gzip');
uncoded($r, $n, 200, 'min-length', 'vhost: the inherited MinLength');
$r = fetch('/mid.html?vhost', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip',
         'vhost: the server\'s MinLength 100 too');
$r = fetch('/sub/deeper/tiny.html?vhost', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'vhost + directory');
ok t_cmp(note_for(qr{^GET /sub/deeper/tiny.html\?vhost })->{level}, 1,
         'vhost + directory: vhost level');
($r, $n) = fetch_noted('/index.html', 'gzip', 'User-Agent' => 'NoGzipBot');
uncoded($r, $n, 200, 'env', 'vhost: the server-wide SetEnvIf');
$r = fetch('/index.html', 'Accept-Encoding' => 'gzip;q=0.5, br');
ok t_cmp($r->header('Content-Encoding'), if_built('br', 'gzip'),
         'vhost: brotli where built');
Apache::TestRequest::module('default');

# ---- strict parsing ----------------------------------------------------------------
my $dir = tempdir(CLEANUP => 1);
# apache2 -t with $directive: (exit status, output, the file, the line
# $directive's directive is on).
sub config_test {
    my ($directive) = @_;
    my ($rc, $out, $conf, $line) = config_check($dir, "$directive\n");
    $line++ if $directive =~ /^<VirtualHost/;
    return ($rc, $out, $conf, $line);
}

for my $directive (@good) {
    my ($rc, $out) = config_test($directive);
    ok t_cmp($rc, 0, "$directive passes apache2 -t: $out");
}

for my $b (@bad) {
    my ($directive, $msg) = @$b;
    my ($rc, $out, $conf, $line) = config_test($directive);
    my ($name) = $directive =~ /(AdaptiveDeflate\w*)/;
    ok $rc != 0;
    ok t_cmp($out, qr/line $line of \Q$conf\E/, "$directive: file and line");
    ok t_cmp($out, qr/\Q$name\E.*\Q$msg\E/, "$directive: message");
}

# The target must lie below the limit's OFF mark (else the controller
# steers into the limit and flaps in and out): refused at start, naming
# both directives where they were set (or the default).
for my $t (["AdaptiveDeflateCPUTarget 90\nAdaptiveDeflateCPULimit 50 40",
            sub { "90 ($_[0]:$_[1]) must be below the OFF mark of "
                  . "AdaptiveDeflateCPULimit 50 40 ($_[0]:" . ($_[1] + 1) . ")" }],
           ['AdaptiveDeflateCPUTarget 95',
            sub { "95 ($_[0]:$_[1]) must be below the OFF mark of "
                  . "AdaptiveDeflateCPULimit 95 85 (the default)" }]) {
    my ($directives, $msg) = @$t;
    my ($rc, $out, $conf, $line) = config_test($directives);
    my $want = 'ADF00010: AdaptiveDeflateCPUTarget ' . $msg->($conf, $line);
    ok $rc != 0;
    ok t_cmp($out, qr/\Q$want\E/, 'target above the limit refused');
    ok t_cmp($out, qr/Configuration check failed/, 'httpd does not start');
}
my ($rc, $out) = config_test("AdaptiveDeflateCPUTarget 90\nAdaptiveDeflateCPULimit 98 92");
ok t_cmp($rc, 0, "a target below the OFF mark passes: $out");
