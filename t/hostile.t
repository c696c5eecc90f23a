# Hostile and odd input: huge and garbled Accept-Encoding headers, broken
# siblings; and BREACH length hiding.  Configuration:
# t/conf/features/hostile.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use IO::Socket::INET;
use Time::HiRes qw(sleep);
use ADFTest;

plan tests => 35;

my $root = docroot();
my $page = slurp("$root/index.html");

# Status, Content-Encoding ('' for none) and body of a raw HTTP/1.1
# response read to its end (Connection: close), chunked or not.
sub parse_response {
    my ($raw) = @_;
    my ($head, $body) = split /\r\n\r\n/, $raw, 2;
    my ($status) = ($head // '') =~ m{^HTTP/1\.1 (\d+)};
    my ($ce) = ($head // '') =~ /^Content-Encoding:\s*(\S+)/mi;
    $body //= '';
    if (($head // '') =~ /^Transfer-Encoding:\s*chunked/mi) {
        my $plain = '';
        while ($body =~ s/^([0-9a-fA-F]+)\r\n//) {
            my $len = hex $1;
            last if $len == 0;
            $plain .= substr($body, 0, $len);
            $body = substr($body, $len + 2);
        }
        $body = $plain;
    }
    return ($status // 0, $ce // '', $body);
}

# ---- Accept-Encoding ---------------------------------------------------
my $big = ('x' x 7900) . ', gzip';
my $r = fetch('/index.html', 'Accept-Encoding' => $big);
ok t_cmp($r->header('Content-Encoding'), 'gzip', '8 KB Accept-Encoding');
ok t_cmp(decode_body($r), $page);
$r = fetch('/index.html', 'Accept-Encoding' => join(',', ('tok') x 1000) . ',br;q=0.1');
ok t_cmp($r->header('Content-Encoding'), if_built('br', undef), '1000 tokens');
ok t_cmp(decode_body($r), $page);
for my $ae ('gzip;q=1e308', 'gzip;q=-1', 'gzip;q=0.0001', ',,;;,', 'gzip;;q=0') {
    my $n;
    ($r, $n) = fetch_noted('/index.html', $ae);
    # a malformed element is ignored: nothing the client offered cleanly
    ok t_cmp($r->code . ' ' . ($r->header('Content-Encoding') // 'identity'),
             '200 identity', "AE '$ae'");
    ok t_cmp($n->{reason}, 'not-accepted', "AE '$ae': reason");
    ok t_cmp($r->content, $page, "AE '$ae': the page's bytes");
}

# Control bytes in the header: httpd may refuse the request (400); what it
# must never do is crash or send a corrupt body.
for my $ae ("gzip\x01", "\x7fbr", "gz\x00ip") {
    my $hp = Apache::TestRequest::hostport();
    my $s = IO::Socket::INET->new(PeerAddr => $hp, Timeout => 5) or die;
    print $s "GET /index.html HTTP/1.1\r\nHost: $hp\r\nAccept-Encoding: $ae\r\n"
           . "Connection: close\r\n\r\n";
    local $/;
    my ($status, $ce, $body) = parse_response(<$s> // '');
    (my $shown = $ae) =~ s/([^ -~])/sprintf '\\x%02x', ord $1/ge;
    ok t_cmp($status, qr/^(200|400)$/, "AE '$shown': refused or served");
    # served: the page, decoded by what the response says it is; refused:
    # httpd's error page, not compressed (status 400 is not listed)
    my $got = $status != 200 ? ($ce eq '' ? $page : "400 in $ce")
                             : decode_as($ce, $body) // 'CORRUPT';
    ok t_cmp($got, $page, "AE '$shown': the page's bytes");
}
ok t_cmp(fetch('/index.html')->code, 200, 'server still up');

# ---- broken siblings -----------------------------------------------------
mkdir "$root/static";
spew("$root/static/emptysib.html", $page);
utime time - 100, time - 100, "$root/static/emptysib.html";
spew("$root/static/emptysib.html.gz", '');
chmod 0644, glob("$root/static/emptysib.html*");
# marked as F's: only its emptiness stops it
mark_sibling("$root/static/emptysib.html", "$root/static/emptysib.html.gz");
$r = fetch('/static/emptysib.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'empty sibling ignored');
ok t_cmp(decode_body($r), $page, 'compressed on the fly instead');

# ---- BREACH length hiding --------------------------------------------------
my %lengths;
my $all_ok = 1;
for (1 .. 20) {
    $r = fetch('/hiding/page.html', 'Accept-Encoding' => 'gzip');
    $lengths{ length $r->content }++;
    $all_ok &&= ($r->header('Content-Encoding') // '') eq 'gzip'
                && (decode_body($r) // '') eq $page;
}
ok $all_ok;
ok t_cmp(scalar(keys %lengths) >= 5 ? 1 : 0, 1,
         'lengths vary: ' . join(',', sort keys %lengths));
# no brotli where hiding: a br-only client is offered nothing
my ($rb, $nb) = fetch_noted('/hiding/page.html', 'br');
uncoded($rb, $nb, 200, 'not-accepted', 'length hiding, br only');
$r = fetch('/hiding/page.html', 'Accept-Encoding' => 'br, gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'gzip offered instead');
ok t_cmp(decode_body($r), $page);
