# The status page: JSON schema and counters that add up across children,
# the controller's state, the self-contained HTML page (rendered in
# headless Chromium without script errors), and mod_status's section.
# Configuration: extra.conf.in (/adf-status, /server-status).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(sleep);
use ADFTest;

plan tests => 59;

my $root = docroot();

my $s0 = status_json();
ok t_cmp(ref $s0->{load}, 'HASH', 'load object');
for my $k (qw(source interval_ms raw smoothed effort limited target
              limit_off limit_on budget_ns_per_byte top_ns_per_byte
              compression_cpu server_cpu age_ms stale sampler_pid)) {
    ok exists $s0->{load}{$k};
}
for my $k (qw(version uptime level responses compressed reasons bytes_in
              bytes_out levels siblings stale_siblings history model
              egress_bytes)) {
    ok exists $s0->{$k};
}
ok t_cmp(ref $s0->{history}, 'ARRAY', 'history');
# The codings the page counts are the ones the build was configured with
# (dcz, zstd against a dictionary, with zstd).
my $built = join ' ', sort(codings(), built('zstd') ? 'dcz' : ());
ok t_cmp(join(' ', sort keys %{ $s0->{compressed} }), $built, 'compressed: codings');
ok t_cmp(join(' ', sort keys %{ $s0->{siblings} }), $built, 'siblings: codings');

# Known traffic, then the counters moved by exactly that.
# Without brotli, br requests go as they are and the sibling is a .gz.
my $b = built('br');
my $sib = if_built('br', 'gzip');
mkdir "$root/static";
spew("$root/static/counted.html", slurp("$root/index.html"));
make_sibling("$root/static/counted.html", $sib);
fetch('/index.html', 'Accept-Encoding' => 'gzip') for 1 .. 3;
fetch('/index.html', 'Accept-Encoding' => 'br') for 1 .. 2;
fetch('/index.html');
fetch('/corpus/photo.jpeg', 'Accept-Encoding' => 'gzip');
fetch('/static/counted.html', 'Accept-Encoding' => $sib);
my $s1 = status_json();
sub delta { my ($a, $b, @path) = @_; $a = $a->{$_}, $b = $b->{$_} for @path; $b - $a }
ok t_cmp(delta($s0, $s1, qw(compressed gzip)), 3, 'gzip count');
ok t_cmp($b ? delta($s0, $s1, qw(compressed br))
            : exists $s1->{compressed}{br} ? 'listed' : 'absent',
         $b ? 2 : 'absent', 'br count (without brotli: none listed)');
# + the first status request itself (counted after its snapshot)
ok t_cmp(delta($s0, $s1, qw(reasons not-accepted)), $b ? 2 : 4,
         'not-accepted');
ok t_cmp(delta($s0, $s1, qw(reasons type)), 1, 'type');
ok t_cmp(delta($s0, $s1, 'siblings', $sib), 1, 'sibling served');
ok t_cmp(delta($s0, $s1, 'responses'), 9, 'responses');
ok delta($s0, $s1, qw(bytes_in gzip)) == 3 * length(slurp("$root/index.html"));
ok delta($s0, $s1, qw(bytes_out gzip)) > 0;
ok delta($s0, $s1, qw(bytes_out gzip)) < delta($s0, $s1, qw(bytes_in gzip));

# The controller's state shows the load it was given.
set_load(5);
ok wait_for(sub { my $s = status_json(); defined $s->{load}{raw}
                  && $s->{load}{raw} == 5 && $s->{load}{effort} == 1 }, 10);
my $s = status_json();
ok t_cmp($s->{level}{gzip}, 9, 'gzip at level 9 when idle');
ok scalar @{ $s->{history} } > 0;
set_load(99);
ok wait_for(sub { status_json()->{load}{limited} }, 10);
set_load(5);
ok wait_for(sub { !status_json()->{load}{limited} }, 10);
# A rise through the target and the limit, and back, for the chart (and
# for the screenshot below).
for my $load (30, 45, 60, 75, 90, 97, 97, 85, 70, 55, 40, 25) {
    set_load($load);
    sleep 0.4;
}
fetch('/index.html', 'Accept-Encoding' => $_) for qw(gzip br gzip);

# The HTML page: self-contained.
my $r = fetch('/adf-status');
ok t_cmp($r->header('Content-Type'), qr{^text/html});
my $html = $r->content;
ok $html =~ /<svg id="chart"/;
ok $html !~ m{(?:src|href)\s*=\s*["']?(?:https?:)?//}i;   # no external assets

# Rendered by a real browser, without script errors.
my ($chromium) = grep { -x } qw(/usr/bin/chromium /usr/bin/chromium-browser);
ok defined $chromium;
my $url = 'http://' . Apache::TestRequest::hostport() . '/adf-status';
# A fresh profile each run; what the browser does is its output.
sub chromium {
    my (@what) = @_;
    my $dir = "/tmp/adf-chromium-$$";
    my $out = defined $chromium
        ? `'$chromium' --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking --disable-component-update --disable-sync --user-data-dir=$dir --virtual-time-budget=5000 @what '$url' 2>/dev/null`
        : '';
    system("rm -rf '$dir'");
    return $out;
}
my $dom = chromium('--dump-dom');
ok t_cmp($dom =~ /data-chart="([^"]*)"/ ? $1 : 'missing', 'ok',
         'chart rendered without script errors');
ok $dom =~ /<polyline class="eff"/;
ok $dom =~ m{<td>gzip</td>};
# The screenshot in the README (docs/status-page.png) is this one: kept
# in t/logs-MPM/status.png after a run of scripts/run-httpd-tests.
my $png = serverroot() . '/logs/status.png';
unlink $png;
chromium('--hide-scrollbars', '--window-size=760,1180', "--screenshot=$png");
my $shot = -f $png ? slurp($png) : '';
ok t_cmp(substr($shot, 0, 8), "\x89PNG\r\n\x1a\n", 'screenshot is a PNG');
ok t_cmp(join('x', unpack('NN', substr($shot, 16, 8))) || '', '760x1180',
         'of the window');

# mod_status's page has our section.
$r = fetch('/server-status');
ok t_cmp($r->content, qr/mod_adaptive_deflate/, 'mod_status section');
$r = fetch('/server-status?auto');
ok t_cmp($r->content, qr/^AdaptiveDeflateResponses: \d+$/m, 'auto format');
