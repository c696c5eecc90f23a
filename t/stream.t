# A FLUSH (here: a CGI that stalls) must reach the client at once, as a
# sync flush that decompresses on its own; event streams are never held;
# a large body is streamed, not held whole in memory.  Configuration:
# cgi.conf.in (cgi/flush.cgi, cgi/empty.cgi), basic.conf.in (bucketeer/),
# and a scratch server of its own.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use Compress::Raw::Zlib;
use File::Temp qw(tempdir);
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time sleep);
use ADFTest;

plan tests => 2 * 4 + 4 + 2 * 7 + 2 + 2;

# Read the response from a raw socket until the first decompressed part
# shows up; return the seconds it took and the text decoded so far.
sub first_part {
    my ($path) = @_;
    my $hostport = Apache::TestRequest::hostport();
    my $sock = IO::Socket::INET->new(PeerAddr => $hostport, Timeout => 10)
        or die "connect $hostport: $!";
    print $sock "GET $path HTTP/1.1\r\nHost: $hostport\r\n"
              . "Accept-Encoding: gzip\r\nConnection: close\r\n\r\n";
    my $t0 = time;
    my ($raw, $head, $text, $ce) = ('', undef, '', '');
    my $inflate = Compress::Raw::Zlib::Inflate->new(WindowBits => WANT_GZIP);
    my $sel = IO::Select->new($sock);
    my $chunked = '';
    while (time - $t0 < 10 && $sel->can_read(10)) {
        my $n = sysread($sock, my $buf, 65536);
        last unless $n;
        $raw .= $buf;
        if (!defined $head && $raw =~ s/^(.*?\r\n\r\n)//s) {
            $head = $1;
            ($ce) = $head =~ /^Content-Encoding:\s*(\S+)/mi;
        }
        next unless defined $head;
        # de-chunk what is complete
        while ($raw =~ s/^([0-9a-fA-F]+)\r\n//) {
            my $len = hex $1;
            if (length($raw) < $len + 2) {
                $raw = sprintf("%x\r\n", $len) . $raw;
                last;
            }
            $chunked .= substr($raw, 0, $len);
            $raw = substr($raw, $len + 2);
        }
        my $in = $chunked;
        $chunked = '';
        my $out;
        $inflate->inflate($in, $out);
        $text .= $out // '';
        return (time - $t0, $text, $ce) if $text =~ /first part/;
    }
    return (time - $t0, $text, $ce);
}

for my $q ('', '?sse') {
    my ($secs, $text, $ce) = first_part("/cgi/flush.cgi$q");
    ok t_cmp($ce, 'gzip', "flush.cgi$q is compressed");
    ok $text =~ /first part/;
    ok t_cmp($text !~ /second part/ ? 1 : 0, 1,
             'first part decoded before the second was written');
    print "# flush.cgi$q: first part after ${secs}s\n";
    ok $secs < 2.5;   # the CGI stalls 3 s: the part came before that
}

# ---- a FLUSH from the handler: a sync flush, at once --------------------------
# mod_bucketeer turns ^F into a FLUSH bucket and ^P into a pass: the body
# A ^F ^P B comes as A, FLUSH, then B.  What precedes the first sync-flush
# marker (00 00 ff ff) must inflate, on its own, to exactly A.
{
    my $root = docroot();
    my ($a, $b) = ('A' . ('a' x 300) . "\n", 'B' . ('b' x 300) . "\n");
    mkdir "$root/bucketeer";
    spew("$root/bucketeer/flush.txt", "$a\x06\x10$b");
    chmod 0644, "$root/bucketeer/flush.txt";
    my $r = fetch('/bucketeer/flush.txt', 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->header('Content-Encoding'), 'gzip', 'A ^F ^P B: gzip');
    my $body = $r->content;
    my $at = index($body, "\x00\x00\xff\xff");
    ok t_cmp($at > 10 ? 1 : 0, 1, 'a sync-flush marker after A');
    my $inflate = Compress::Raw::Zlib::Inflate->new(WindowBits => -MAX_WBITS);
    my $prefix = substr($body, 10, $at + 4 - 10);     # past the gzip header
    my $out = '';
    $inflate->inflate($prefix, $out);
    ok t_cmp($out, $a, 'what precedes it inflates to exactly A');
    ok t_cmp(decode_body($r), "$a$b", 'and the whole to A B');
}

# ---- an empty body from a CGI: as it is, for GET and HEAD alike -----------------
for my $q ('', '?cl0') {
    my $r = fetch("/cgi/empty.cgi$q", 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->code, 200, "empty CGI body$q: 200");
    ok t_cmp($r->header('Content-Encoding'), undef, 'not compressed');
    ok t_cmp(length($r->content), 0, 'no byte');
    my $n = note_for(qr{^GET /cgi/empty\.cgi\Q$q\E });
    ok t_cmp("$n->{coding} $n->{reason}", 'identity min-length',
             'noted as too short');
    ok t_cmp(vary_count($r), 1, 'Vary all the same');
    my $h = head("/cgi/empty.cgi$q", 'Accept-Encoding' => 'gzip');
    ok t_cmp($h->header('Content-Encoding'), undef, 'HEAD: as GET');
    ok t_cmp(vary_count($h), 1, 'HEAD: Vary');
}
# ... and a body of unknown length that is not empty: HEAD says gzip too.
{
    my $g = fetch('/cgi/chunks.cgi', 'Accept-Encoding' => 'gzip');
    my $h = head('/cgi/chunks.cgi', 'Accept-Encoding' => 'gzip');
    ok t_cmp($g->header('Content-Encoding'), 'gzip', 'a streamed CGI body: gzip');
    ok t_cmp($h->header('Content-Encoding'), 'gzip', 'HEAD: as GET');
}

# ---- memory per response: a large body is streamed ------------------------------
# A body of up to 16 MB used to be flattened and compressed whole in the
# request's pool before a byte was sent: three clients that ask for a
# 15 MB file and do not read it asked for ~70 MB.  A server of its own,
# with one event child, so that every connection is in the process
# measured, idle: every response compressed (ADFTest::one_child_server).
{
    my $dir = tempdir(CLEANUP => 1);
    chmod 0755, $dir;
    mkdir "$dir/htdocs";
    spew("$dir/htdocs/page.html", slurp(docroot() . '/index.html'));
    chmod 0644, "$dir/htdocs/page.html";
    # 15 MB of text: within the size the filter once took whole.
    open my $big, '>', "$dir/htdocs/big.txt" or die;
    print $big "$_ the quick brown fox " . ($_ * 7919 % 10007) . " jumps\n"
        for 1 .. 400_000;
    close $big;
    chmod 0644, "$dir/htdocs/big.txt";
    my $base = one_child_server($dir, '');
    my $ua = Apache::TestRequest::user_agent();
    wait_for(sub { (eval { status_json($base)->{load}{effort} } // -1) == 1 },
             10);
    # The child's peak resident size (the kernel keeps it: no sampling race).
    my $child_peak = sub {
        my $pid = slurp("$dir/httpd.pid") + 0;
        my $kb = 0;
        for my $c (split ' ', `pgrep -P $pid`) {
            my $s = eval { slurp("/proc/$c/status") } // '';
            $kb += $1 if $s =~ /^VmHWM:\s+(\d+)/m;
        }
        return $kb;
    };
    $ua->get("$base/page.html", 'Accept-Encoding' => 'gzip') for 1 .. 3;
    my $peak0 = $child_peak->();
    # Three clients that ask for the big file and do not read it.
    my @stalled;
    for (1 .. 3) {
        my $s = IO::Socket::INET->new(PeerAddr => $base =~ s{^http://}{}r)
            or die;
        print $s "GET /big.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n";
        push @stalled, $s;
    }
    sleep 3;
    my $peak = $child_peak->() - $peak0;
    my $gz = 0;
    for my $s (@stalled) {
        my $head = '';
        while ($head !~ /\r\n\r\n/ && sysread($s, my $buf, 1024)) {
            $head .= $buf;
        }
        $gz++ if $head =~ /^Content-Encoding: gzip\r$/mi;
        close $s;
    }
    ok t_cmp($gz, 3, 'sanity: the three were compressed');
    # Streamed (as bodies over 1 MB are): about 14 MB for the three.
    ok t_cmp($peak < 32 * 1024 ? 1 : 0, 1,
             "3 concurrent responses of a 15 MB file: the child's peak grew by "
             . "$peak kB");
    stop_scratch_server($dir);
}
