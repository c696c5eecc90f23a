# The level follows the load signal (AdaptiveDeflateLoadSource file:...,
# sampled every 100 ms): full at light load, nothing above the CPU limit
# with hysteresis, lower levels between; size caps; no load source: a
# fixed level; deciding never takes httpd's RNG lock.  Configuration:
# t/conf/features/load.conf.in, and scratch servers of its own.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Copy qw(copy);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use ADFTest;

plan tests => 31;

my $root = docroot();
copy("$root/corpus/book.txt", "$root/caps/big.txt") or die "copy: $!";
chmod 0644, "$root/caps/big.txt";
my $page = slurp("$root/index.html");

# Each probe (ADFTest::probe) has its own query string, so its log line
# is its own.
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
ok t_cmp(level9_bytes($r->content, '/index.html'), 'as small as level 9',
         'light load: the top of the levels');
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
uncoded($r, $n, 200, 'cpu-limit', 'above the limit');
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
uncoded($r, $n, 200, 'load', 'between the target and the limit');

# Back to light load: the maximum level again, quickly.
my $t0 = time;
idle();             # the effort back at 1: every response at the maximum
($r, $n) = probe();
ok t_cmp($n->{reason}, 'max', 'reason max again');
print "# back to level 9 after ", time - $t0, " s\n";
ok t_cmp(level9_bytes($r->content, '/index.html'), 'as small as level 9',
         'the top again');
ok t_cmp(decode_body($r), $page);

# Size caps: 1k:9 *:1 in /caps.
$r = fetch('/caps/small.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(level9_bytes($r->content, '/caps/small.html'), 'as small as level 9',
         'small response: under its cap of 9');
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

# ---- deciding takes no lock of httpd's --------------------------------------------
# A server of its own, with one event child, so that every connection is
# in the process measured (ADFTest::one_child_server).  A preloaded shim
# counts calls of apr_random_insecure_bytes(), which is what
# ap_random_pick() takes httpd's global RNG mutex around.
{
    my $dir = tempdir(CLEANUP => 1);
    chmod 0755, $dir;
    spew("$dir/shim.c", <<'C');
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>
static void mark(const char *c)
{
    const char *p = getenv("ADF_RNG_COUNT");
    int fd = p ? open(p, O_WRONLY | O_APPEND | O_CREAT, 0666) : -1;
    if (fd >= 0) {
        if (write(fd, c, 1) < 0) {
        }
        close(fd);
    }
}
/* "L" from httpd only: a wrapper script's shell inherits the preload too */
__attribute__((constructor)) static void loaded(void)
{
    if (strcmp(program_invocation_short_name, "apache2") == 0
        || strcmp(program_invocation_short_name, "httpd") == 0) {
        mark("L");
    }
}
int apr_random_insecure_bytes(void *g, void *buf, size_t n)
{
    static int (*real)(void *, void *, size_t);
    if (!real) {
        real = (int (*)(void *, void *, size_t))dlsym(RTLD_NEXT,
                                         "apr_random_insecure_bytes");
    }
    mark("x");
    return real(g, buf, n);
}
C
    system('cc', '-shared', '-fPIC', '-o', "$dir/shim.so", "$dir/shim.c",
           '-ldl') == 0 or die 'cc shim';
    my $count = "$dir/rng";
    spew($count, '');
    chmod 0666, $count;
    make_path("$dir/htdocs/hide");
    for my $f ('page.html', 'hide/page.html') {
        spew("$dir/htdocs/$f", $page);
        chmod 0644, "$dir/htdocs/$f";
    }
    chmod 0755, "$dir/htdocs", "$dir/htdocs/hide";
    my $load = "$dir/load";
    my $base = one_child_server($dir, <<"CONF",
<Directory "$dir/htdocs/hide">
    AdaptiveDeflateLengthHiding 64
</Directory>
CONF
                                LD_PRELOAD => "$dir/shim.so",
                                ADF_RNG_COUNT => $count);
    my $ua = Apache::TestRequest::user_agent();
    my $calls = sub { my $c = slurp($count); return $c =~ tr/x// };
    my $effort = sub {
        my $l = eval { status_json($base)->{load} } || {};
        return $l->{effort} // -1;
    };
    ok t_cmp(slurp($count), qr/L/, 'sanity: the counting shim is loaded');
    # Positive control: length hiding draws its padding from httpd's
    # generator (on purpose: the padding must not be predictable).
    wait_for(sub { defined $ua->get("$base/page.html",
                                    'Accept-Encoding' => 'gzip')
                       ->header('Content-Encoding') }, 10);
    my $before = $calls->();
    $ua->get("$base/hide/page.html", 'Accept-Encoding' => 'gzip') for 1 .. 5;
    ok t_cmp($calls->() - $before >= 5 ? 1 : 0, 1,
             'sanity: the shim counts ap_random_pick (length hiding)');
    # Deciding responses: idle, and with the controller between two rungs
    # (a load a little above the target), where a die is thrown per
    # response.
    $before = $calls->();
    my $n = 0;
    for my $pct (5, 55) {
        spew("$load.tmp", "$pct\n");
        rename "$load.tmp", $load or die "rename: $!";
        wait_for(sub { my $e = $effort->(); $pct == 5 ? $e == 1 : $e < 1 }, 5);
        for (1 .. 20) {
            my $r = $ua->get("$base/page.html", 'Accept-Encoding' => 'gzip');
            $n++ if $r->is_success;
        }
    }
    my $used = $calls->() - $before;
    ok t_cmp($n, 40, 'sanity: 40 responses');
    ok t_cmp($used, 0, "deciding $n responses took httpd's RNG lock "
             . "$used times");
    stop_scratch_server($dir);
}
