# An idle server compresses from its first response on: after a start,
# and after a graceful restart, the first GET and HEAD of a compressible
# page are compressed, and alike, whatever the client accepts.  The
# controller starts at every coding's cheapest rung: a lower start sends
# the first responses as identity at random ("load"), a HEAD unlike its
# GET, and `apachectl restart && curl -sI` shows no Content-Encoding one
# time in two.
#
# The server is idle by its signal (a load file reading 0), so that a busy
# test machine does not make it a loaded one; three full starts, each
# followed by a graceful restart.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Time::HiRes qw(sleep);
use ADFTest;

my @clients = ('gzip', 'br', 'gzip, deflate, br', 'zstd');
my @ae = grep { my $c = $_; !grep { !built($_) } split /\s*,\s*/, $c =~ s/deflate, //r }
         @clients;
my $starts = 3;
plan tests => $starts * 2 * @ae * 2;

my $page = ("<p>An idle server compresses its first response.</p>\n" x 400);
my $dir = scratch_dir($page);
spew("$dir/load", "0\n");
chmod 0644, "$dir/load";

my $conf = <<"CONF";
LogFormat "%r %{adaptive_deflate_coding}n %{adaptive_deflate_level}n %{adaptive_deflate_reason}n" n
CustomLog "$dir/notes" n
AdaptiveDeflate On
AdaptiveDeflateLoadSource file:$dir/load
CONF

my $ua = Apache::TestRequest::user_agent();

# GET and HEAD, one after the other, for each kind of client
sub first_looks {
    my ($url, $when) = @_;
    for my $ae (@ae) {
        my $get = $ua->get("$url/page.html", 'Accept-Encoding' => $ae);
        my $head = $ua->head("$url/page.html", 'Accept-Encoding' => $ae);
        my $g = $get->header('Content-Encoding') // 'identity';
        my $h = $head->header('Content-Encoding') // 'identity';
        ok t_cmp($g ne 'identity' ? 1 : 0, 1,
                 "$when, Accept-Encoding: $ae: the first GET is compressed ($g)");
        ok t_cmp($h, $g, "$when, Accept-Encoding: $ae: HEAD as GET");
    }
}

sub graceful {
    my $resumed = () = (-e "$dir/error_log" ? slurp("$dir/error_log") : '')
                       =~ /resuming normal operations/g;
    system(ADFTest::httpd_bin(), '-d', $dir, '-f', "$dir/httpd.conf", '-k', 'graceful') == 0
        or die "graceful";
    wait_for(sub {
        my $n = () = slurp("$dir/error_log") =~ /resuming normal operations/g;
        $n > $resumed;
    }, 20) or die "no graceful restart";
}

for my $n (1 .. $starts) {
    my $url = scratch_server($dir, 'event', $conf . "LogLevel notice\n");
    first_looks($url, "start $n");
    graceful();
    # the new generation's children: a moment to take over the port
    sleep 0.3;
    first_looks($url, "start $n, graceful restart");
    stop_scratch_server($dir);
}
t_debug(slurp("$dir/notes")) if -e "$dir/notes";
