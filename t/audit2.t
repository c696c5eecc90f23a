# A second outside audit (t/audit-findings.md, "Second audit"): what the
# module must never do, each block a way it did.  Sanity checks (what
# holds already, so that a failure below means what it says) are marked.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use IO::Socket::INET;
use JSON::PP ();
use Time::HiRes qw(sleep time);
use ADFTest;

plan tests => 22;

idle();

my $root = docroot();
my $a2 = "$root/audit2";
make_path(map { "$a2/$_" } qw(scope vary varyoff));
my $orig = slurp("$root/index.html");

# ---- 1. a sibling is readable wherever precompressed serving is not in ------
# ---- effect for its URL (an Alias, another vhost, a <Location> scope) --------
my $secret = "internal notes: db password hunter2\n" x 60;
page("$a2/scope/notes.md", $secret, qw(gzip br));
page("$a2/scope/open.html", $orig, qw(gzip br));
page("$a2/scope/a.html", $orig, qw(gzip br));
for my $u (qw(/audit2/scope/notes.md /audit2-mirror/notes.md)) {
    ok t_cmp(fetch($u)->code, 403, "sanity: $u is refused");
}
fetch('/audit2/scope/open.html?n', 'Accept-Encoding' => 'gzip');
ok t_cmp(note_for(qr{^GET /audit2/scope/open.html\?n })->{reason},
         'precompressed', 'sanity: siblings are served under the <Location>');
ok t_cmp(fetch('/audit2/scope/notes.md.gz')->code, 404,
         'sanity: its sibling is not a resource there');
for my $u (qw(/audit2-mirror/notes.md.gz /audit2-mirror/notes.md.br)) {
    my ($code, $body) = code_body(fetch($u));
    holds !($code == 200 && $body =~ /hunter2/),
          "$u must not disclose the refused notes.md (got $code)";
}
my $r = fetch('/audit2-mirror/a', 'Accept' => '*/*');
ok t_cmp($r->header('Content-Type') // '', qr{^text/html},
         'MultiViews through the Alias must not answer with a sibling as a '
         . 'file of its own');
ok t_cmp(decode_body($r) // '', $orig, '... and sends the page');

# ---- 2. Vary set by mod_headers ("set" replaces) loses Accept-Encoding ------
# ---- on sibling responses -----------------------------------------------------
for my $d (qw(vary varyoff)) {
    page("$a2/$d/page.html", $orig, qw(gzip br));
    $r = fetch("/audit2/$d/page.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->content, slurp("$a2/$d/page.html.gz"),
             "sanity: $d: the sibling is served");
    my $vary = join(',', $r->header('Vary'));
    ok t_cmp($vary, qr/User-Agent/, "sanity: $d: mod_headers' Vary is there");
    ok t_cmp($vary, qr/Accept-Encoding/i,
             "$d: the gzip sibling varies on Accept-Encoding ($vary)");
    $r = fetch("/audit2/$d/page.html", 'Accept-Encoding' => 'identity');
    $vary = join(',', $r->header('Vary'));
    ok t_cmp($vary, qr/Accept-Encoding/i,
             "$d: so does F where a sibling exists ($vary)");
}

# ---- a server of our own: httpd's RNG lock (item 17 of issue 10) and ---------
# ---- memory per response ---------------------------------------------------------
# One event child, so that every connection is in the process measured
# (on ADF_SCRATCH_PORT, or the suite's port + 50).
# A preloaded shim counts calls of apr_random_insecure_bytes(), which is
# what ap_random_pick() takes httpd's global RNG mutex around.
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
system('cc', '-shared', '-fPIC', '-o', "$dir/shim.so", "$dir/shim.c", '-ldl')
    == 0 or die 'cc shim';
my $count = "$dir/rng";
spew($count, '');
chmod 0666, $count;
my $load = "$dir/load";
spew($load, "5\n");
chmod 0644, $load;
make_path("$dir/htdocs/hide");
chmod 0755, "$dir/htdocs", "$dir/htdocs/hide";
for my $f ('page.html', 'hide/page.html') {
    spew("$dir/htdocs/$f", $orig);
    chmod 0644, "$dir/htdocs/$f";
}
# 15 MB of text: within the size the filter takes whole.
open my $big, '>', "$dir/htdocs/big.txt" or die;
print $big "$_ the quick brown fox " . ($_ * 7919 % 10007) . " jumps\n"
    for 1 .. 400_000;
close $big;
chmod 0644, "$dir/htdocs/big.txt";
my $base = scratch_server($dir, 'event', <<"CONF",
LoadModule status_module \@MODDIR\@/mod_status.so
ServerLimit 1
StartServers 1
ThreadsPerChild 16
MaxRequestWorkers 16
MinSpareThreads 1
MaxSpareThreads 16
<Directory "$dir/htdocs/hide">
    AdaptiveDeflateLengthHiding 64
</Directory>
<Location "/adf-status">
    SetHandler adaptive-deflate-status
</Location>
AdaptiveDeflate On
AdaptiveDeflateLoadSource file:$load
AdaptiveDeflateLoadInterval 100ms
AdaptiveDeflateCPUTarget 50
AdaptiveDeflateCPULimit 95 90
CONF
                           LD_PRELOAD => "$dir/shim.so",
                           ADF_RNG_COUNT => $count);
my $ua = Apache::TestRequest::user_agent();
sub calls { my $c = slurp($count); return $c =~ tr/x// }
sub effort {
    my $r = $ua->get("$base/adf-status?json");
    my $l = eval { JSON::PP::decode_json($r->content)->{load} } || {};
    return $l->{effort} // -1;
}

sub set_load2 {
    spew("$load.tmp", "$_[0]\n");
    rename "$load.tmp", $load or die;
}
sub compressing {
    wait_for(sub { defined $ua->get("$base/page.html",
                                    'Accept-Encoding' => 'gzip')
                       ->header('Content-Encoding') }, 10);
}
ok t_cmp(slurp($count), qr/L/, 'sanity: the counting shim is loaded');
# Positive control: length hiding draws its padding from httpd's
# generator (on purpose: the padding must not be predictable).
compressing();
my $before = calls();
$ua->get("$base/hide/page.html", 'Accept-Encoding' => 'gzip') for 1 .. 5;
ok t_cmp(calls() - $before >= 5 ? 1 : 0, 1,
         'sanity: the shim counts ap_random_pick (length hiding)');
# Deciding responses: idle, and with the controller between two rungs (a
# load a little above the target), where a die is thrown per response.
$before = calls();
my $n = 0;
for my $pct (5, 55) {
    set_load2($pct);
    wait_for(sub { my $e = effort(); $pct == 5 ? $e == 1 : $e < 1 }, 5);
    for (1 .. 20) {
        $r = $ua->get("$base/page.html", 'Accept-Encoding' => 'gzip');
        $n++ if $r->is_success;
    }
}
my $used = calls() - $before;
ok t_cmp($n, 40, 'sanity: 40 responses');
ok t_cmp($used, 0, "item 17: deciding $n responses took httpd's RNG lock "
         . "$used times");

# ---- 3. memory per response: a body of up to 16 MB is flattened and ------------
# ---- compressed whole in the request's pool before a byte is sent -------------
set_load2(5);
wait_for(sub { effort() == 1 }, 10);     # every response compressed
# The child's peak resident size (the kernel keeps it: no sampling race).
sub child_peak {
    my $pid = slurp("$dir/httpd.pid") + 0;
    my $kb = 0;
    for my $c (split ' ', `pgrep -P $pid`) {
        my $s = eval { slurp("/proc/$c/status") } // '';
        $kb += $1 if $s =~ /^VmHWM:\s+(\d+)/m;
    }
    return $kb;
}
$ua->get("$base/page.html", 'Accept-Encoding' => 'gzip') for 1 .. 3;
my $peak0 = child_peak();
# Three clients that ask for the big file and do not read it.
my @stalled;
for (1 .. 3) {
    my $s = IO::Socket::INET->new(PeerAddr => $base =~ s{^http://}{}r)
        or die;
    print $s "GET /big.txt HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n";
    push @stalled, $s;
}
sleep 3;
my $peak = child_peak() - $peak0;
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
# Streamed (as bodies over 16 MB are): about 14 MB for the three.
ok t_cmp($peak < 32 * 1024 ? 1 : 0, 1,
         "3 concurrent responses of a 15 MB file: the child's peak grew by "
         . "$peak kB");

stop_scratch_server($dir);
