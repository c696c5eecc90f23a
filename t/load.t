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

plan tests => 16;

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
my ($ok, $r, $n) = wait_note(sub { $_[1]{load} =~ m{^5\.0/} });
ok $ok;
ok t_cmp(gzip_xfl($r->content), 2, 'light load: level 9');
ok t_cmp($n->{reason}, 'max', 'reason max');

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
