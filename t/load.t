# The level follows the load signal (AdaptiveDeflateLoadSource file:...,
# sampled every 100 ms): full at light load, nothing above the CPU limit
# with hysteresis, lower levels between; size caps.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Copy qw(copy);
use ADFTest;

plan tests => 23;

my $root = docroot();
copy("$root/corpus/book.txt", "$root/caps/big.txt") or die "copy: $!";
chmod 0644, "$root/caps/big.txt";
my $page = slurp("$root/index.html");

# Each probe has its own query string, so its log line is its own.
my $probes = 0;
sub probe {
    my $tag = 'probe=' . ++$probes;
    my $r = fetch("/index.html?$tag", 'Accept-Encoding' => 'gzip');
    my $n = note_for(qr{^GET /index.html\?$tag });
    return ($r, $n);
}

sub wait_note {
    my ($want) = @_;
    my ($r, $n);
    my $ok = wait_for(sub { ($r, $n) = probe(); $want->($r, $n) }, 10);
    return ($ok, $r, $n);
}

set_load(5);
# A fresh server starts from a cheap budget and climbs within a few
# samples (when this file runs alone, nothing warmed it up).
my ($ok, $r, $n) = wait_note(sub { $_[1]{load} =~ m{^5\.0/}
                                   && $_[1]{reason} eq 'max' });
ok $ok;
ok t_cmp(gzip_xfl($r->content), 2, 'light load: level 9');
ok t_cmp($n->{reason}, 'max', 'reason max');
# A client that accepts no coding is answered without the load: its note
# says so, where a gzip client's (above) carries it.
fetch('/index.html?no-coding');
my $nc = note_for(qr{^GET /index.html\?no-coding });
ok t_cmp($nc->{reason}, 'not-accepted', 'no coding accepted');
ok t_cmp($nc->{load}, '-', 'no load read for it');

set_load(99);
($ok, $r, $n) = wait_note(sub { $_[1]{reason} eq 'cpu-limit' });
ok $ok;
ok !defined $r->header('Content-Encoding');
ok t_cmp($r->content, $page, 'uncompressed body intact');
ok t_cmp(vary_count($r), 1, 'Vary while limited');

# Between ON (70) and OFF (90): still limited (hysteresis).
set_load(80);
wait_for(sub { (probe())[1]{load} =~ m{^80\.0/} }, 10);
($r, $n) = probe();
ok t_cmp($n->{load} =~ m{^80\.0/} ? $n->{reason} : "load $n->{load}, not 80",
         'cpu-limit', 'hysteresis holds between ON and OFF');

# Below ON but above the target (50): compression resumes and the
# controller lowers the effort until nothing is compressed.
set_load(65);
($ok, $r, $n) = wait_note(sub { $_[1]{reason} eq 'load' });
ok $ok;
ok !defined $r->header('Content-Encoding');

# Back to light load: the maximum level again, quickly.
my $t0 = time;
idle();             # the effort back at 1: every response at the maximum
($r, $n) = probe();
ok t_cmp($n->{reason}, 'max', 'reason max again');
print "# back to level 9 after ", time - $t0, " s\n";
ok t_cmp(gzip_xfl($r->content), 2, 'level 9 again');
ok t_cmp(decode_body($r), $page);

# Size caps: 1k:9 *:1 in /caps.
$r = fetch('/caps/small.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(gzip_xfl($r->content), 2, 'small response: level 9');
$r = fetch('/caps/big.txt', 'Accept-Encoding' => 'gzip');
ok t_cmp(note_for(qr{^GET /caps/big.txt })->{level}, 1,
         'large response capped at level 1');
ok t_cmp(note_for(qr{^GET /caps/big.txt })->{reason}, 'size-cap',
         'reason size-cap');

# No load source: the top of the range on every response, at once and
# an interval later; never "no-signal" (a fixed level, like mod_deflate's).
{
    my $dir = serverroot() . '/fixed';
    system('rm', '-rf', $dir);
    mkdir $dir or die "$dir: $!";
    mkdir "$dir/htdocs" or die;
    mkdir "$dir/logs" or die;
    spew("$dir/htdocs/page.html", $page);
    chmod 0755, $dir, "$dir/htdocs";
    chmod 0777, "$dir/logs";
    chmod 0644, "$dir/htdocs/page.html";
    my $url = scratch_server($dir, 'event', <<"CONF");
LogFormat "%r level=%{adaptive_deflate_level}n reason=%{adaptive_deflate_reason}n" n
CustomLog "$dir/logs/notes" n
AdaptiveDeflate On
AdaptiveDeflateLoadSource none
AdaptiveDeflateLoadInterval 100ms
<Location "/adf-status">
    SetHandler adaptive-deflate-status
</Location>
CONF
    my $ua = Apache::TestRequest::user_agent();
    my $first = $ua->get("$url/page.html?1", 'Accept-Encoding' => 'gzip');
    select undef, undef, undef, 0.5;
    my $later = $ua->get("$url/page.html?2", 'Accept-Encoding' => 'gzip');
    my $status = $ua->get("$url/adf-status?json")->content;
    stop_scratch_server($dir);
    my $notes = slurp("$dir/logs/notes");
    ok t_cmp($notes, qr{^GET /page.html\?1 \S+ level=9 reason=max$}m,
             'no load source: the first response at the top');
    ok t_cmp($notes, qr{^GET /page.html\?2 \S+ level=9 reason=max$}m,
             'and an interval later (never no-signal)');
    ok t_cmp(gzip_xfl($later->content), 2, 'gzip level 9 on the wire');
    ok t_cmp(decode_body($later), $page);
    ok t_cmp($status, qr{"source":"none \(fixed levels}, 'the status names it');
}
