# A FLUSH (here: a CGI that stalls) must reach the client at once, as a
# sync flush that decompresses on its own; event streams are never held.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use Compress::Raw::Zlib;
use IO::Socket::INET;
use IO::Select;
use Time::HiRes qw(time);
use ADFTest;

plan tests => 2 * 4;

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
