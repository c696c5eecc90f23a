# The compressed cache (AdaptiveDeflateCache): a miss is compressed on the
# fly and queued, a later request is answered from the cache in every
# coding with the same decoded bytes, through the static path (length,
# HEAD, Range, 304); never for another version of the file (same-second
# edits, rollbacks); never around access rules or content filters; only
# while idle; on a read-only directory the site goes on, with one log
# line; a worker killed mid-write leaves nothing corrupt; damaged entries
# are refused; MAXSIZE holds; restarts keep the cache; bad directories
# stop startup naming the directive.  Configuration:
# t/conf/features/cache.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use MIME::Base64 qw(encode_base64);
use Socket qw(SOL_SOCKET SO_RCVBUF SO_LINGER);
use Time::HiRes qw(sleep time);
use ADFTest;

# Parts that need root (chown to another user, a tmpfs mount) fail when
# not run as root, saying so (ADFTest::needs_root): CI runs as root.  Only
# the one-process server of ADF_VALGRIND=1 (httpd -X under valgrind)
# leaves parts out of the plan: it cannot be killed, restarted or
# signalled and go on (26 + 5 + 4 assertions).
my $one = $ENV{ADF_VALGRIND} ? 1 : 0;
plan tests => 194 + 3 * scalar(grep { $_ ne 'zstd' } codings())
    - ($one ? 26 + 5 + 4 : 0);

my $root = docroot();
my $dir = "$root/cache";
my $cdir = serverroot() . '/adfcache';
make_path("$dir/ssi", "$dir/subst", "$dir/off", "$dir/nozstd", "$dir/sendfile");
my $page = slurp("$root/corpus/page.html");
my $text = slurp("$root/corpus/book.txt");
my %ext = (br => '.br', gzip => '.gz', zstd => '.zst');

sub cache_files {
    opendir my $d, $cdir or die "$cdir: $!";
    my @f = grep { !/^\./ } readdir $d;
    closedir $d;
    return @f;
}

# Until the worker has nothing queued and nothing in hand (asked once a
# second: ADFTest::wait_hit says why), the suite's or the server at $base's
# (every $every seconds).
sub settle {
    my ($base, $every) = @_;
    wait_for(sub {
        my $c = status_json($base)->{cache};
        !$c->{queue} && !$c->{working};
    }, 60, $every || 1);
}

sub mkpage {
    my ($name, $data) = @_;
    spew("$dir/$name", $data);
    chmod 0644, "$dir/$name";
}

# ---- startup: the directory is checked, errors name the directive ----------
my $tmp = tempdir(CLEANUP => 1);
chmod 0755, $tmp;
my ($rc, $out, $conf, $line) =
    config_check($tmp, "AdaptiveDeflateCache $tmp/none 1M\n");
ok t_cmp($rc != 0 ? 1 : 0, 1, 'a missing directory stops startup');
ok t_cmp($out, qr{ADF00017: AdaptiveDeflateCache \Q$tmp\E/none \(\Q$conf\E:$line\): No such file or directory},
         'naming the directive, file and line');
spew("$tmp/file", "x");
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/file 1M\n");
ok t_cmp($out, qr{ADF00017: .*: not a directory});
mkdir "$tmp/open";
chmod 0777, "$tmp/open";
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/open 1M\n");
ok t_cmp($out, qr{ADF00017: .*: any user may write it}, 'world-writable refused');
# sticky or not: anyone could add entries to it
mkdir "$tmp/sticky";
chmod 01777, "$tmp/sticky";
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/sticky 1M\n");
ok t_cmp($out, qr{ADF00017: .*\Q$tmp\E/sticky: any user may write it},
         'world-writable and sticky: refused too');
mkdir "$tmp/ro";
chmod 0500, "$tmp/ro";
if ($> == 0) {
    chown((getpwnam('nobody'))[2], -1, "$tmp/ro");
}
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/ro 1M\n");
ok t_cmp($out, qr{ADF00017: .*: \S+ cannot write in it: Permission denied},
         "the children's user must be able to write it");
mkdir "$tmp/good";
chmod 0700, "$tmp/good";
chown((getpwnam('nobody'))[2], -1, "$tmp/good") if $> == 0;
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/good 1M\n");
ok t_cmp($rc, 0, "a good directory: $out");
if (needs_root(7, 'a cache directory, or one above it, owned by another user')) {
    mkdir "$tmp/other";
    chmod 0700, "$tmp/other";
    chown((getpwnam('daemon'))[2], -1, "$tmp/other");
    ($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/other 1M\n");
    ok t_cmp($out, qr{ADF00017: .*: owned by another user}, 'another owner');
    # Whoever may replace a directory above the cache may swap the cache
    # for planted entries: every one on the way is checked.
    my $nobody = (getpwnam('nobody'))[2];
    for my $case ([ 'userparent', 0755, 'daemon',
                    qr{\Q$tmp\E/userparent \(a directory above the cache\): owned by another user},
                    'a parent owned by another user' ],
                  [ 'openparent', 0777, 'root',
                    qr{\Q$tmp\E/openparent \(a directory above the cache\): any user may write it},
                    'a parent anyone may write' ],
                  [ 'stickyparent', 01777, 'root', undef,
                    'a sticky parent (as /tmp) is fine' ]) {
        my ($name, $mode, $owner, $want, $what) = @$case;
        make_path("$tmp/$name/c");
        chown((getpwnam($owner))[2], -1, "$tmp/$name");
        chmod $mode, "$tmp/$name";
        chown $nobody, -1, "$tmp/$name/c";
        chmod 0700, "$tmp/$name/c";
        ($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/$name/c 1M\n");
        ok t_cmp($want ? $out : $rc, $want // 0, $what);
    }
    # An ACL that lets another user write is a writer like the mode bits.
    make_path("$tmp/acl");
    chown $nobody, -1, "$tmp/acl";
    chmod 0700, "$tmp/acl";
    system('setfacl', '-m', 'u:daemon:rwx', "$tmp/acl") == 0 or die "setfacl";
    ($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/acl 1M\n");
    ok t_cmp($out, qr{ADF00017: .*\Q$tmp\E/acl: user \d+, through its ACL may write it},
             'an ACL that lets another user write: refused');
    # One directory under two names (a link) is one cache: one size.
    symlink "$tmp/good", "$tmp/goodlink" or die "symlink: $!";
    ($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/good 1M\n"
                             . "<VirtualHost 127.0.0.1:1>\nAdaptiveDeflateCache $tmp/goodlink 64k\n</VirtualHost>\n");
    ok t_cmp($out, qr{ADF00017: AdaptiveDeflateCache \Q$tmp\E/goodlink .*: a second size for this directory \(the first: \Q$conf\E:$line, as \Q$tmp\E/good\)},
             'one directory under two names, two sizes: refused');
    # The children run in ChrootDir, where entries are reached through
    # /proc: without /proc there, httpd does not start.
    make_path("$tmp/jail");
    ($rc, $out) = config_check($tmp, "ChrootDir $tmp/jail\nAdaptiveDeflateCache $tmp/good 1M\n");
    ok t_cmp($out, qr{ADF00017: .*cannot reach it through /proc/self/fd/\d+ .*: is /proc mounted inside ChrootDir\?},
             'ChrootDir without /proc: refused at start-up');
}
($rc, $out) = config_check($tmp, "<Directory $tmp>\nAdaptiveDeflateCache $tmp/good 1M\n</Directory>\n");
ok t_cmp($out, qr{line @{[$line + 1]} of \Q$conf\E:\s*AdaptiveDeflateCache: DIR MAXSIZE belongs in the server config},
         'not in a directory');
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/good 1x\n");
ok t_cmp($out, qr{AdaptiveDeflateCache: .*1x}, 'a bad size');
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/good 1k\n");
ok t_cmp($out, qr{AdaptiveDeflateCache: MAXSIZE 1k is below}, 'too small');
mkdir "$tmp/good/site";
($rc, $out) = config_check($tmp, "DocumentRoot $tmp/good/site\nAdaptiveDeflateCache $tmp/good 1M\n");
ok t_cmp($out, qr{ADF00017: .*: holds the DocumentRoot \Q$tmp\E/good/site},
         'a directory that holds the site');
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache maybe\n");
ok t_cmp($out, qr{AdaptiveDeflateCache: takes DIR MAXSIZE}, 'one word: On or Off');
($rc, $out) = config_check($tmp, "AdaptiveDeflateCache $tmp/good 1M\n"
                         . "<VirtualHost 127.0.0.1:1>\nAdaptiveDeflateCache $tmp/good 2M\n</VirtualHost>\n");
ok t_cmp($out, qr{ADF00017: .*: a second size for this directory \(the first: \Q$conf\E:$line, as \Q$tmp\E/good\)},
         'one directory, one size');

# A scratch server's directories in $sd: documents, logs, and a cache
# directory c the children own.
sub scratch_dirs {
    my ($sd) = @_;
    make_path("$sd/htdocs", "$sd/logs", "$sd/c");
    chmod 0755, $sd, "$sd/htdocs";
    chmod 0777, "$sd/logs";
    chmod 0700, "$sd/c";
    chown((getpwnam('nobody'))[2], -1, "$sd/c") if $> == 0;
    return $sd;
}

# ---- a client that goes away in the middle of a hit -----------------------------
# The handler sends a hit as the default handler sends a file: a client
# that resets the connection half-way is logged with the 200 it was sent,
# not as the server's error (a 500, and ErrorDocument 500 run for it).
# A small send buffer and a reader that stops keep the handler writing
# (EnableSendfile Off: the file's bytes go through writev) when it resets.
unless ($one) {
    my $sd = scratch_dirs("$tmp/abort");
    spew("$sd/load", "5\n");
    chmod 0644, "$sd/load";
    open my $rnd, '<:raw', '/dev/urandom' or die "/dev/urandom: $!";
    read($rnd, my $bytes, 1_500_000) == 1_500_000 or die 'urandom';
    close $rnd;
    spew("$sd/htdocs/big.html", encode_base64($bytes));
    chmod 0644, "$sd/htdocs/big.html";
    utime time - 60, time - 60, "$sd/htdocs/big.html";
    my $url = scratch_server($sd, 'event', <<"CONF");
SendBufferSize 4096
CustomLog "$sd/logs/access_log" "%>s %{adaptive_deflate_cache}n"
AdaptiveDeflate On
AdaptiveDeflateEncodings gzip
AdaptiveDeflateLoadSource file:$sd/load
AdaptiveDeflateCache $sd/c 64M
CONF
    my $ua = Apache::TestRequest::user_agent();
    my $hit = wait_for(sub {
        ($ua->get("$url/big.html", 'Accept-Encoding' => 'gzip')
            ->header('ETag') // '') =~ /-cache\./;
    }, 60, 1);
    my ($hp) = $url =~ m{//(.*)};
    for (1 .. 3) {
        my $s = IO::Socket::INET->new(PeerAddr => $hp, Proto => 'tcp')
            or die "$hp: $!";
        setsockopt($s, SOL_SOCKET, SO_RCVBUF, 4096);
        print $s "GET /big.html HTTP/1.1\r\nHost: localhost\r\n"
                 . "Accept-Encoding: gzip\r\n\r\n";
        sysread($s, my $got, 200);
        sleep 1;
        setsockopt($s, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0));
        close $s;
    }
    stop_scratch_server($sd);
    wait_for(sub { !IO::Socket::INET->new($hp) }, 10);
    my $log = -e "$sd/logs/access_log" ? slurp("$sd/logs/access_log") : '';
    print "# $_\n" for split /\n/, $log;
    ok t_cmp($hit ? 1 : 0, 1, 'a 1.5 MB page cached');
    my @lines = split /\n/, $log;
    my $errors = grep { /^5/ } @lines;
    my $hits = grep { /^200 hit$/ } @lines;
    ok t_cmp("$errors 5xx, " . ($hits >= 4 ? 'the hits' : "$hits hits"),
             '0 5xx, the hits',
             'hits whose clients reset half-way are logged as the 200s sent');
}

# ---- a directory that goes away while the server runs ---------------------------
# A reload the parent takes by signal (no configtest before it: logrotate's
# SIGUSR1) must not take the site down: the server goes on without that
# cache, and says so; and the server can still be stopped.
unless ($one) {
    my $sd = scratch_dirs("$tmp/restart");
    spew("$sd/htdocs/page.html", $page);
    chmod 0644, "$sd/htdocs/page.html";
    my $url = scratch_server($sd, 'event', <<"CONF");
AdaptiveDeflate On
AdaptiveDeflateCache $sd/c 1M
CONF
    my $ua = Apache::TestRequest::user_agent();
    system('rm', '-rf', "$sd/c") == 0 or die;
    kill 'USR1', slurp("$sd/httpd.pid") =~ /(\d+)/;
    wait_for(sub { slurp("$sd/error_log") =~ /ADF00028/ }, 10);
    sleep 1;
    my $r = $ua->get("$url/page.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->code, 200, 'after a reload that found the directory gone, the site answers');
    ok t_cmp(decode_body($r), $page);
    ok t_cmp(slurp("$sd/error_log"),
             qr{ADF00028: AdaptiveDeflateCache \Q$sd\E/c \(.*\): No such file or directory.*going on without this cache},
             'and says it goes on without the cache');
    # apache2 -k stop reads the configuration before it signals
    stop_scratch_server($sd);
    my ($hp) = $url =~ m{//(.*)};
    my $stopped = wait_for(sub { !IO::Socket::INET->new($hp) }, 10);
    print "# $_\n" for $stopped ? () : split /\n/, slurp("$sd/error_log");
    ok t_cmp($stopped ? 'stopped' : 'running', 'stopped',
             'and apache2 -k stop still stops it');
}

# ---- a miss, then hits in every coding ----------------------------------------
idle();
mkpage('page.html', $page);
# Older than a second: httpd's ETags are then strong (If-Range needs one).
utime time - 60, time - 60, "$dir/page.html";
my ($r, $n) = fetch_noted('/cache/page.html', 'br');
ok t_cmp("$n->{cache} $n->{coding}", 'miss br', 'first request: a miss');
ok t_cmp(decode_body($r), $page, 'compressed on the fly');
my $fly_br = length $r->content;
my %hit;
for my $c (qw(br gzip zstd)) {
    ($r, $n) = wait_hit('/cache/page.html', $c);
    ok t_cmp("$n->{cache} $n->{coding} $n->{reason} $n->{level}",
             "hit $c cache-hit -", "$c from the cache");
    ok t_cmp($r->header('Content-Encoding'), $c);
    ok t_cmp(decode_body($r), $page, "$c decodes to the page");
    ok t_cmp($r->header('Content-Length'), length($r->content),
             'its own Content-Length');
    ok t_cmp($r->header('ETag'), qr/-ad-$c-cache\.[0-9a-f]{16}"$/, 'an ETag of its own');
    ok t_cmp(vary_count($r), 1, 'Vary');
    $hit{$c} = $r;
}
ok t_cmp(mapped("$cdir/") > 0 ? 1 : 0, 1,
         'hits sent from mappings of their entries a child keeps (adf_held.h)');
ok t_cmp(length($hit{br}->content) < $fly_br ? 1 : 0, 1,
         'smaller than on the fly (' . length($hit{br}->content)
         . " < $fly_br)");
# The strongest settings: the reference tools' strongest, give or take
# their headers and checksums; gzip through libdeflate 12 beats gzip -9.
my %ref;
for my $c (qw(br gzip zstd)) {
    compress_to($c, $page, "$dir/ref.$c");
    $ref{$c} = -s "$dir/ref.$c";
}
ok t_cmp(abs(length($hit{br}->content) - $ref{br}) <= 16 ? 1 : 0, 1,
         'br: quality 11 (' . length($hit{br}->content) . " ~ $ref{br})");
ok t_cmp(abs(length($hit{zstd}->content) - $ref{zstd}) <= 16 ? 1 : 0, 1,
         'zstd: level 19 (' . length($hit{zstd}->content) . " ~ $ref{zstd})");
ok t_cmp(length($hit{gzip}->content) <= $ref{gzip} ? 1 : 0, 1,
         'gzip: no larger than gzip -9 (' . length($hit{gzip}->content)
         . " <= $ref{gzip})");
my %etags = map { $_ => $hit{$_}->header('ETag') } keys %hit;
($r, $n) = fetch_noted('/cache/page.html', undef);
ok t_cmp($r->content, $page, 'identity for a client without codings');
ok t_cmp($n->{cache}, '-');
$etags{identity} = $r->header('ETag');
my %uniq = map { $_ => 1 } values %etags;
ok t_cmp(scalar(keys %uniq), 4, 'four representations, four ETags');
ok t_cmp($r->header('Last-Modified'), $hit{br}->header('Last-Modified'),
         "the entry carries F's Last-Modified");

# ---- the static path: HEAD, Range, 304, If-Range ----------------------------------
my $body = $hit{br}->content;
$r = head('/cache/page.html', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), 'br', 'HEAD');
ok t_cmp($r->header('Content-Length'), length($body));
ok t_cmp($r->header('ETag'), $etags{br});
ok t_cmp($r->content, '');
($r, $n) = fetch_noted('/cache/page.html', 'br', Range => 'bytes=10-99');
ok t_cmp($r->code, 206, 'Range');
ok t_cmp($r->header('Content-Range'), 'bytes 10-99/' . length($body),
         "over the entry's bytes");
ok $r->content eq substr($body, 10, 90);
ok t_cmp($n->{cache}, 'hit');
($r, $n) = fetch_noted('/cache/page.html', 'br', 'If-None-Match' => $etags{br});
ok t_cmp($r->code, 304, '304 on its ETag');
ok t_cmp($r->header('ETag'), $etags{br});
ok t_cmp(vary_count($r), 1);
($r, $n) = fetch_noted('/cache/page.html', 'br', Range => 'bytes=0-9',
               'If-Range' => $etags{br});
ok t_cmp($r->code, 206, 'If-Range with its ETag: a range');
($r, $n) = fetch_noted('/cache/page.html', 'br', Range => 'bytes=0-9',
               'If-Range' => $etags{identity});
ok t_cmp($r->code, 200, "If-Range with the identity's ETag: all of it");
ok t_cmp(decode_body($r), $page);
# A date cannot tell which coding's bytes the client holds.
($r, $n) = fetch_noted('/cache/page.html', 'br', Range => 'bytes=0-9',
               'If-Range' => $hit{br}->header('Last-Modified'));
ok t_cmp($r->code, 200, 'If-Range with the date: all of it');
ok t_cmp(decode_body($r), $page);
($r, $n) = fetch_noted('/cache/page.html', 'gzip', 'If-None-Match' => $etags{br});
ok t_cmp($r->code, 200, "br's ETag does not validate gzip");

# A hit goes out from the descriptor its lookup checked (the module's own
# handler, in the default handler's place): by sendfile, and read without
# mmap, where the directory says so; only the entry's coded bytes.
mkpage('sendfile/page.html', $page);
utime time - 60, time - 60, "$dir/sendfile/page.html";
($r, $n) = wait_hit('/cache/sendfile/page.html', 'gzip');
ok t_cmp($n->{cache}, 'hit', 'EnableSendfile On, EnableMMap Off: a hit');
ok t_cmp(decode_body($r), $page, 'that decodes to the page');
ok t_cmp($r->header('Content-Length'), length($r->content),
         "the entry's coded bytes only");
my $sent = $r->content;
($r, $n) = fetch_noted('/cache/sendfile/page.html', 'gzip',
                       Range => 'bytes=100-4099');
ok t_cmp($r->code . ' ' . ($r->content eq substr($sent, 100, 4000) ? 'same' : 'differ'),
         '206 same', 'a range of them');
$r = head('/cache/sendfile/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Length') . ' ' . length($r->content),
         length($sent) . ' 0', 'HEAD: their length, no body');
($r, $n) = fetch_noted('/cache/sendfile/page.html', 'gzip',
                       'If-None-Match' => $r->header('ETag'));
ok t_cmp($r->code, 304, 'and a 304 on their ETag');

# ---- never another version of the file ----------------------------------------
my $v1 = substr($text, 0, 30000);
(my $v2 = $v1) =~ tr/a-z/A-Z/;      # the same size
mkpage('edit.html', $v1);
($r) = wait_hit('/cache/edit.html', 'br');
ok t_cmp(decode_body($r), $v1, 'version 1 cached');
# An edit in the same second, mtime restored to the nanosecond: only the
# ctime says the file changed.
system('cp', '-p', "$dir/edit.html", "$dir/edit.ref") == 0 or die;
spew("$dir/edit.html", $v2);
system('touch', '-r', "$dir/edit.ref", "$dir/edit.html") == 0 or die;
($r, $n) = fetch_noted('/cache/edit.html', 'br');
ok t_cmp(decode_body($r), $v2, 'same-second edit: the new bytes');
ok t_cmp($n->{cache}, 'miss');
($r) = wait_hit('/cache/edit.html', 'br');
ok t_cmp(decode_body($r), $v2, 'and then cached');
# A rollback: release 1 back with cp -p (its older mtime) over release 2.
my $old = time - 86400;
mkpage('roll.v1', $v1);
utime $old, $old, "$dir/roll.v1";
system('cp', '-p', "$dir/roll.v1", "$dir/roll.html") == 0 or die;
($r) = wait_hit('/cache/roll.html', 'gzip');
ok t_cmp(decode_body($r), $v1, 'release 1 cached');
mkpage('roll.html', $v2);
($r) = wait_hit('/cache/roll.html', 'gzip');
ok t_cmp(decode_body($r), $v2, 'release 2 cached');
system('cp', '-p', "$dir/roll.v1", "$dir/roll.html") == 0 or die;
for my $c (qw(br gzip zstd)) {
    ($r, $n) = fetch_noted('/cache/roll.html', $c);
    ok t_cmp(decode_body($r), $v1, "rolled back with cp -p: release 1 ($c)");
}
# Older content under an older date (touch -d).
my $v3 = "$v1 release 3";
mkpage('roll.html', $v3);
system('touch', '-d', '2001-01-01 00:00:00', "$dir/roll.html") == 0 or die;
($r) = fetch_noted('/cache/roll.html', 'gzip');
ok t_cmp(decode_body($r), $v3, 'touch -d to an old date: the new bytes');
($r) = wait_hit('/cache/roll.html', 'gzip');
ok t_cmp(decode_body($r), $v3);

# ---- content filters, the Off switch: never cached ------------------------------
mkpage('ssi/page.shtml', "<p><!--#echo var=\"DOCUMENT_NAME\" --></p>\n"
                         . ("<!-- a server-side comment -->\n" x 20)
                         . substr($text, 0, 2000));
mkpage('subst/page.html', "SECRET\n" . substr($text, 0, 4000));
mkpage('off/page.html', substr($text, 0, 4000));
for my $p ('/cache/ssi/page.shtml', '/cache/subst/page.html',
           '/cache/off/page.html') {
    fetch_noted($p, 'br') for 1 .. 2;
}
sleep 1.5;
($r, $n) = fetch_noted('/cache/ssi/page.shtml', 'br');
ok t_cmp("$n->{cache} $n->{coding}", '- br', 'SSI: compressed on the fly');
ok t_cmp(decode_body($r), qr{^<p>page\.shtml</p>\n}, 'and processed');
($r, $n) = fetch_noted('/cache/subst/page.html', 'br');
ok t_cmp("$n->{cache} $n->{coding}", '- br', 'Substitute: on the fly');
ok t_cmp(decode_body($r), qr{^REDACTED\n}, 'and substituted');
($r, $n) = fetch_noted('/cache/off/page.html', 'br');
ok t_cmp("$n->{cache} $n->{coding}", '- br', 'AdaptiveDeflateCache Off');

# ---- access rules hold; the cache's own files are no resources ------------------
mkpage('secret.html', "top secret\n" x 500);
mkpage('README.md', "private notes\n" x 500);
for (1 .. 3) {
    ($r) = fetch_noted('/cache/secret.html', 'br');
    ok t_cmp($r->code, 403, '<Files> denied');
    ($r) = fetch_noted('/cache/README.md', 'br');
    ok t_cmp($r->code, 403, '<FilesMatch> denied');
}
mkpage('later.html', substr($text, 5000, 20000));
($r) = wait_hit('/cache/later.html', 'br');
ok t_cmp(decode_body($r), substr($text, 5000, 20000), 'cached while allowed');
spew("$dir/.htaccess", "<Files \"later.html\">\nRequire all denied\n</Files>\n");
chmod 0644, "$dir/.htaccess";
($r, $n) = fetch_noted('/cache/later.html', 'br');
ok t_cmp($r->code, 403, 'denied later: the cache does not answer');
unlink "$dir/.htaccess";
my @names = grep { /^[0-9a-f]{16}\.(br|gz|zst)$/ } cache_files();
ok t_cmp(scalar(@names) > 0 ? 1 : 0, 1, 'entries on disk');
($r) = fetch_noted("/adfcache-exposed/$names[0]", 'br');
ok t_cmp($r->code, 404, 'an entry requested by its own name: not found');
ok $r->content !~ /ADFcache/;

# ---- only while idle ------------------------------------------------------------------
set_load(97);
wait_for(sub { status_json()->{load}{limited} }, 5);
mkpage('busy.html', substr($text, 40000, 20000));
($r, $n) = fetch_noted('/cache/busy.html', 'br');
ok t_cmp($n->{cache}, 'miss', 'busy: a miss');
ok t_cmp(decode_body($r), substr($text, 40000, 20000));
sleep 2;
ok t_cmp(status_json()->{cache}{queue} >= 1 ? 1 : 0, 1, 'queued, waiting');
ok t_cmp(status_json()->{cache}{idle} ? 1 : 0, 0, 'not idle');
($r, $n) = fetch_noted('/cache/busy.html', 'br');
ok t_cmp($n->{cache}, 'miss', 'nothing compressed while busy');
idle();
($r, $n) = wait_hit('/cache/busy.html', 'br');
ok t_cmp($n->{cache}, 'hit', 'compressed once idle');

# ---- a herd of misses: one item queued, each coding compressed once -------
settle();
my $s0 = status_json()->{cache};
set_load(97);       # hold the worker while the herd arrives
wait_for(sub { !status_json()->{cache}{idle} }, 5);
mkpage('herd.html', substr($text, 20000, 30000));
my $url = 'http://' . Apache::Test::vars('servername') . ':'
          . Apache::Test::vars('port') . '/cache/herd.html';
system("for i in \$(seq 40); do curl -s -o /dev/null -H 'Accept-Encoding: br' '$url' & done; wait") == 0
    or die 'curl herd';
ok t_cmp(status_json()->{cache}{queue}, 1, '40 concurrent misses: queued once');
idle();
wait_hit('/cache/herd.html', $_) for qw(br gzip zstd);
settle();
# (a worker whose child ends mid-file queues it again for the next)
ok t_cmp(status_json()->{cache}{dirs}[0]{written} - $s0->{dirs}[0]{written}, 3,
         'each coding written once');

# ---- damaged entries are refused, and removed -------------------------------------
settle();
my %before = map { $_ => 1 } cache_files();
mkpage('victim.html', substr($text, 60000, 30000));
my $victim = substr($text, 60000, 30000);
wait_hit('/cache/victim.html', $_) for qw(br gzip zstd);
my @mine = grep { !$before{$_} && /^[0-9a-f]{16}\./ } cache_files();
my ($vbr) = grep { /\.br$/ } @mine;
my ($vgz) = grep { /\.gz$/ } @mine;
ok t_cmp(defined $vbr && defined $vgz ? 1 : 0, 1, 'its entries');
# Removed: gone, or already made again by the worker (whole again).
sub replaced {
    my ($f, $damaged) = @_;
    my $now = eval { slurp($f) };
    return !defined $now || $now ne $damaged ? 1 : 0;
}
truncate "$cdir/$vbr", (-s "$cdir/$vbr") - 1 or die "truncate: $!";
my $dbr = slurp("$cdir/$vbr");
my $lost = log_count(qr/ADF00021/);
($r, $n) = fetch_noted('/cache/victim.html', 'br');
ok t_cmp($n->{cache}, 'miss', 'a truncated entry is refused');
ok t_cmp(decode_body($r), $victim);
ok t_cmp(replaced("$cdir/$vbr", $dbr), 1, 'and removed');
# A byte changed inside: the trailer is whole, the CRC says no.
open my $fh, '+<:raw', "$cdir/$vgz" or die;
seek $fh, 100, 0;
read $fh, my $byte, 1;
seek $fh, 100, 0;
print $fh chr(ord($byte) ^ 0x55);
close $fh;
my $dgz = slurp("$cdir/$vgz");
($r, $n) = fetch_noted('/cache/victim.html', 'gzip');
ok t_cmp($n->{cache}, 'miss', 'a damaged entry is refused');
ok t_cmp(decode_body($r), $victim);
ok t_cmp(replaced("$cdir/$vgz", $dgz), 1, 'and removed');
ok t_cmp(log_count(qr/ADF00021/) - $lost, 2, 'each logged');
($r, $n) = wait_hit('/cache/victim.html', 'gzip');
ok t_cmp($n->{cache}, 'hit', 'made again');
ok t_cmp(decode_body($r), $victim);

# ---- an entry that went behind the worker's back, and the q-values -----------------
# Removed by hand (an operator, tmpfiles): made again, not a miss until the
# next restart.  Meanwhile a client that prefers the missing coding gets
# it on the fly, not the less-preferred one from the cache.
settle();
%before = map { $_ => 1 } cache_files();
mkpage('gone.html', substr($text, 120000, 30000));
my $gone = substr($text, 120000, 30000);
my @gone_codings = grep { built($_) } qw(br zstd);
if (@gone_codings) {
    my $other = $gone_codings[0];
    wait_hit('/cache/gone.html', $_) for ('gzip', $other);
    settle();
    my ($ggz) = grep { !$before{$_} && /^[0-9a-f]{16}\.gz$/ } cache_files();
    unlink "$cdir/$ggz" or die "unlink $cdir/$ggz: $!";
    ($r, $n) = fetch_noted('/cache/gone.html', "gzip;q=1, $other;q=0.1");
    ok t_cmp($r->header('Content-Encoding'), 'gzip',
             "gzip;q=1, $other;q=0.1 with only the $other entry: gzip");
    ok t_cmp($n->{cache}, 'miss', 'on the fly, and queued');
    ok t_cmp(decode_body($r), $gone);
    ($r, $n) = wait_hit('/cache/gone.html', "gzip;q=1, $other;q=0.1");
    ok t_cmp($n->{cache} . ' ' . $r->header('Content-Encoding'), 'hit gzip',
             'the removed entry is made again');
    ok t_cmp(decode_body($r), $gone);
}
else {
    # a gzip-only build: the removal alone
    wait_hit('/cache/gone.html', 'gzip');
    settle();
    my ($ggz) = grep { !$before{$_} && /^[0-9a-f]{16}\.gz$/ } cache_files();
    unlink "$cdir/$ggz" or die "unlink $cdir/$ggz: $!";
    ($r, $n) = fetch_noted('/cache/gone.html', 'gzip');
    ok t_cmp($n->{cache}, 'miss', 'a removed entry: a miss');
    ok t_cmp(decode_body($r), $gone);
    ok t_cmp($r->header('Content-Encoding'), 'gzip');
    ($r, $n) = wait_hit('/cache/gone.html', 'gzip');
    ok t_cmp($n->{cache}, 'hit', 'the removed entry is made again');
    ok t_cmp(decode_body($r), $gone);
}

# ---- a file labelled encoded by mod_headers after the swap -------------------------
# F.html.gz through the pre-gzipped recipe (no E=no-gzip): never coded a
# second time, never cached, whatever the client accepts.
settle();
make_path("$dir/pregz");
my $css = substr($text, 0, 20000);
mkpage('pregz/style.html', $css);
compress_to('gzip', $css, "$dir/pregz/style.html.gz");
chmod 0644, "$dir/pregz/style.html.gz";
%before = map { $_ => 1 } cache_files();
for my $i (1 .. 3) {
    ($r, $n) = fetch_noted('/cache/pregz/style.html', join(', ', 'gzip', grep { $_ ne 'gzip' } codings()));
    settle();
}
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'pre-gzipped: gzip, once');
ok t_cmp(decode_as('gzip', $r->content), $css, 'decoded once: the CSS');
ok t_cmp(scalar(grep { !$before{$_} } cache_files()), 0, 'and not cached');

# ---- what runs after the handler sees F's name, not the entry's --------------------
# A label keyed on the name (\.gz$) must not match HASH.gz; X-File names F.
settle();
make_path("$dir/label");
my $lpage = substr($text, 30000, 25000);
mkpage('label/page.html', $lpage);
for my $c (grep { $_ ne 'zstd' } codings()) {
    ($r, $n) = wait_hit('/cache/label/page.html', $c);
    ok t_cmp($n->{cache} . ' ' . ($r->header('Content-Encoding') // '-'), "hit $c",
             "$c hit where a header rule keys on the file name");
    ok t_cmp(decode_body($r), $lpage);
    ok t_cmp($r->header('X-File'), "$dir/label/page.html", "REQUEST_FILENAME is F's");
}

# ---- only the codings the directory serves ------------------------------------------
settle();
%before = map { $_ => 1 } cache_files();
mkpage('nozstd/page.html', substr($text, 90000, 20000));
wait_hit('/cache/nozstd/page.html', $_) for qw(br gzip);
settle();
@mine = grep { !$before{$_} && /^[0-9a-f]{16}\./ } cache_files();
ok t_cmp(join(' ', sort map { /(\.\w+)$/ } @mine), '.br .gz',
         'AdaptiveDeflateEncodings br gzip: no zstd entry');

# A large page asked for while the machine is nearly busy (the idle mark
# is half the CPU target: 25 %): the worker takes 2 % of a CPU, and the
# file is long in the writing.  The response, and the temporary file the
# worker writes (undef if none appeared).
sub writing {
    my ($name, $data) = @_;
    mkpage($name, $data);
    set_load(24);
    wait_for(sub { my $l = status_json()->{load}; $l->{raw} == 24 && !$l->{stale} }, 5);
    my ($r) = fetch_noted("/cache/$name", 'br');
    my $temp;
    wait_for(sub {
        ($temp) = grep { /\.tmp\.[0-9a-f]{16}\.\d+$/ } cache_files();
        defined $temp;
    }, 30);
    return ($r, $temp);
}

# ---- the worker killed while it writes ----------------------------------------------
# One process under valgrind (-X): killing or restarting it ends the run.
unless ($one) {
    my $big = substr($text, 0, 400000);
    my ($first, $temp) = writing('big.html', $big);
    ok t_cmp(decode_body($first), $big, 'big: on the fly');
    ok t_cmp(defined $temp ? 1 : 0, 1, 'the worker is writing ' . ($temp // '-'));
    # "<entry>.tmp.<node>.<pid>": this host's and PID namespace's node
    my ($pid) = ($temp // '') =~ /\.tmp\.[0-9a-f]{16}\.(\d+)$/;
    ok t_cmp($pid && kill('KILL', $pid) ? 1 : 0, 1, "killed it (pid " . ($pid // '-') . ")");
    ok t_cmp(wait_for(sub { !kill(0, $pid) }, 10), 1, 'gone');
    (my $final = $temp // '') =~ s/\.tmp\.[0-9a-f]{16}\.\d+$//;
    ok t_cmp(-e "$cdir/$final" ? 1 : 0, 0, 'the entry it was writing never appeared');
    idle();
    # Its job was left in the shared segment: the worker that takes over
    # queues it again, with no request asking.
    ok t_cmp(wait_for(sub { -e "$cdir/$final" }, 60) ? 1 : 0, 1,
             "the next worker finished the job ($final), unasked");
    my ($bad, $hits) = (0, 0);
    wait_for(sub {
        $hits = 0;
        for my $c (qw(br gzip zstd)) {
            ($r, $n) = fetch_noted('/cache/big.html', $c);
            $bad++ if (decode_body($r) // '') ne $big;
            $hits++ if $n->{cache} eq 'hit';
        }
        $hits == 3;
    }, 90, 1);
    ok t_cmp($bad, 0, 'every answer since decodes to the file');
    ok t_cmp($hits, 3, 'and all three codings came from the cache');
    ok t_cmp((grep { /\.tmp\.[0-9a-f]{16}\.$pid$/ } cache_files()) ? 1 : 0, 0,
             "the killed worker's file is gone");
}

# ---- CGIs killed as they start, while the worker writes ---------------------------------
# Under prefork such a process, not yet running its script, runs its
# child's exit (the SIGTERM handler it inherited), and with it every
# cleanup of the child's pool (signal.t).  The worker's own cleanup, which
# unlinks the file it writes, hangs off mod_watchdog's pool, under the
# process pool (measured: it never runs under prefork): the write goes on.
# 30 of them over 3 to 4 children: some land in the worker's (13 in a
# run).  (mod_cgid forks elsewhere.)
unless ($one) {
    my $failed = log_count(qr/ADF00022/);
    my (undef, $temp) = writing('big2.html', substr($text, 100000, 400000));
    ok t_cmp(defined $temp ? 1 : 0, 1, 'the worker is writing ' . ($temp // '-'));
    ok t_cmp(refused_cgi_posts(30), '413: 30', 'meanwhile 30 CGIs killed as they start');
    (my $final = $temp // '') =~ s/\.tmp\.[0-9a-f]{16}\.\d+$//;
    idle();
    ok t_cmp(wait_for(sub { -e "$cdir/$final" }, 60) ? 1 : 0, 1,
             "the entry was written all the same ($final)");
    ok t_cmp(log_count(qr/ADF00022/) - $failed, 0, 'no write failed');
}

# ---- restarts keep the cache --------------------------------------------------------------
# One process under valgrind (-X): killing or restarting it ends the run.
unless ($one) {
    my $hits0 = status_json()->{cache}{hits};
    restart('USR1');
    ($r, $n) = fetch_noted('/cache/page.html', 'br');
    ok t_cmp($n->{cache}, 'hit', 'graceful restart: still cached');
    ok $r->content eq $body;
    ok t_cmp(status_json()->{cache}{hits} > $hits0 ? 1 : 0, 1, 'counters kept');
    restart('HUP');
    ($r, $n) = fetch_noted('/cache/page.html', 'br');
    ok t_cmp($n->{cache}, 'hit', 'full restart: still cached');
    ok t_cmp(decode_body($r), $page);
    ok t_cmp(wait_for(sub { my $d = status_json()->{cache}{dirs}[0];
                            $d->{counted} && $d->{entries} > 0 }, 10), 1,
             'entries counted again');
    ok t_cmp(status_json()->{cache}{hits} < $hits0 ? 1 : 0, 1, 'counters cleared');
}

# ---- a read-only directory: on the fly, one log line ------------------------------
my $failed = log_count(qr/ADF00022/);
chmod 0500, $cdir;
my %ro = map { ("ro$_.html" => substr($text, 1000 * $_, 20000)) } 1 .. 3;
mkpage($_, $ro{$_}) for keys %ro;
my $errors = 0;
for my $round (1 .. 3) {
    for my $p (sort keys %ro) {
        ($r, $n) = fetch_noted("/cache/$p", 'br');
        $errors++ if $r->code != 200 || (decode_body($r) // '') ne $ro{$p};
    }
    sleep 0.5;
}
ok t_cmp(wait_for(sub { log_count(qr/ADF00022/) > $failed }, 10), 1,
         'the failure is logged');
sleep 1;
($r) = fetch_noted('/cache/ro1.html', 'br');
$errors++ if $r->code != 200;
ok t_cmp($errors, 0, 'no error to any client');
ok t_cmp(log_count(qr/ADF00022/) - $failed, 1, 'once');
ok t_cmp(error_log(), qr{ADF00022: AdaptiveDeflateCache \Q$cdir\E: cannot create a file in it \(Permission denied\)},
         'saying what and why');
ok t_cmp(status_json()->{cache}{dirs}[0]{writable} ? 1 : 0, 0, 'status: not writable');
chmod 0700, $cdir;
($r, $n) = wait_hit('/cache/ro1.html', 'br', 30);
ok t_cmp($n->{cache}, 'hit', 'writable again: cached');
ok t_cmp(error_log(), qr{ADF00023: AdaptiveDeflateCache \Q$cdir\E: writable again});

# ---- a full disk: a 64 KB tmpfs mounted over the directory (root only) ---------
# The cache is its directory as opened at start: a mount over it counts
# from the next restart on.
my ($uid, $gid) = (getpwnam('nobody'))[2, 3];
settle();           # nothing half-written under the mount
# One process under valgrind (-X): a restart ends the run.
if (!$one && needs_root(5, 'a full disk (a tmpfs mounted over the cache)')) {
    if (system('mount', '-t', 'tmpfs', '-o',
               "size=64k,mode=0700,uid=$uid,gid=$gid", 'tmpfs', $cdir) != 0) {
        holds 0, "mount -t tmpfs over $cdir failed: see the error output"
            for 1 .. 5;
    }
    else {
        restart('USR1');
        my $failed = log_count(qr/ADF00022/);
        # Not even one coding of it fits in 64 KB.
        my $full = substr($text, 0, 400000);
        mkpage('full.html', $full);
        my $errors = 0;
        wait_for(sub {
            ($r, $n) = fetch_noted('/cache/full.html', 'br');
            $errors++ if $r->code != 200 || (decode_body($r) // '') ne $full;
            log_count(qr/ADF00022/) > $failed;
        }, 45, 1);
        ok t_cmp($errors, 0, 'full disk: no error to any client');
        ok t_cmp(log_count(qr/ADF00022/) - $failed, 1, 'one line');
        ok t_cmp(error_log(), qr{ADF00022: AdaptiveDeflateCache \Q$cdir\E: cannot leave room on its filesystem for another file \(No space left on device\)},
                 'saying so');
        ok t_cmp((grep { /\.tmp\./ } cache_files()) ? 1 : 0, 0, 'nothing half-written left');
        # Lazily: the running generation holds the directory open (adf_cache.c)
        # until the restart opens the one under it.
        system('umount', '-l', $cdir) == 0 or die "umount $cdir";
        restart('USR1');
        mkpage('space.html', substr($text, 3000, 20000));
        ($r, $n) = wait_hit('/cache/space.html', 'br', 60);
        ok t_cmp($n->{cache}, 'hit', 'space again: cached');
    }
}

# ---- a full disk while a child holds the entries it sent (root only) ------------
# An evicted entry a child still maps (adf_held.h) returns its blocks only
# when let go, seconds later.  The worker waits for that room rather than
# evict again: new entries take the room of about as many old ones, not
# of every old one the child holds (the build before: 7 evictions for 4
# new pages, 1 old entry left).  One child (the suite's come and go, and
# their mappings with them), a 512 KB tmpfs.
if (!$one && needs_root(4, 'a full disk while entries are held (a tmpfs)')) {
    my $sd = scratch_dirs("$tmp/heldfull");
    if (system('mount', '-t', 'tmpfs', '-o',
               "size=512k,mode=0700,uid=$uid,gid=$gid", 'tmpfs', "$sd/c") != 0) {
        holds 0, "mount -t tmpfs over $sd/c failed: see the error output"
            for 1 .. 4;
    }
    else {
        my (@old, @new, %want);
        for my $k (1 .. 12) {
            my $name = "held$k.html";
            $want{$name} = substr($text, 30000 * $k, 40000);
            spew("$sd/htdocs/$name", $want{$name});
            chmod 0644, "$sd/htdocs/$name";
            push @{ $k <= 8 ? \@old : \@new }, $name;
        }
        my $url = one_child_server($sd, "AdaptiveDeflateCache $sd/c 2M\n");
        my $ua = Apache::TestRequest::user_agent();
        my $get = sub {
            my ($name, $c) = @_;
            my $r = $ua->get("$url/$name", 'Accept-Encoding' => $c);
            return (($r->header('ETag') // '') =~ /-cache\./ ? 1 : 0, $r);
        };
        # The old pages cached in every coding: about 3/4 of the disk.
        for my $name (@old) {
            for my $c (codings()) {
                wait_for(sub { ($get->($name, $c))[0] }, 60, 0.2);
            }
        }
        settle($url, 0.2);
        my $ev0 = status_json($url)->{cache}{evictions};
        my $errors = 0;
        # Every old entry sent, so held, in every coding; the new pages
        # asked for while they are.
        for my $name (@old) {
            for my $c (codings()) {
                my ($hit, $r) = $get->($name, $c);
                $errors++ if !$hit || (decode_body($r) // '') ne $want{$name};
            }
        }
        my $held = mapped("$sd/c/");
        $get->($_, 'br') for @new;
        for my $name (@new) {
            wait_for(sub { ($get->($name, 'br'))[0] }, 60, 0.2);
        }
        settle($url, 0.2);
        my $evicted = status_json($url)->{cache}{evictions} - $ev0;
        my $df = `df -k $sd/c | tail -1`;
        print "# held $held mappings; evicted $evicted for ", scalar(@new),
              " new pages; $df";
        ok t_cmp($errors, 0, 'held entries: hits decoding to their pages');
        ok t_cmp($held >= 8 * scalar(codings()) ? 1 : 0, 1,
                 "the child holds every old entry ($held mappings)");
        ok t_cmp($evicted <= @new + 1 ? 1 : 0, 1,
                 "four new pages evicted about four held old ones ($evicted), "
                 . 'not every one the child held');
        my $left = grep { ($get->($_, 'br'))[0] } @old;
        ok t_cmp($left >= 3 ? 1 : 0, 1, "old entries still cached ($left)");
        stop_scratch_server($sd);
        system('umount', '-l', "$sd/c") == 0 or die "umount $sd/c";
    }
}

# ---- MAXSIZE, least recently used first --------------------------------------------------
mkpage('hot.html', substr($text, 100000, 20000));
wait_hit('/cache/hot.html', 'br');
my $max = status_json()->{cache}{dirs}[0]{max_bytes};
my $ev0 = status_json()->{cache}{evictions};
my @rand;
for my $i (1 .. 20) {
    my $b = '';
    $b .= pack('N', int(rand(2**32))) for 1 .. 11250;
    my $data = encode_base64($b);
    push @rand, $data;
    mkpage("many$i.html", $data);
    fetch_noted("/cache/many$i.html", 'br');
    # many1 written whole before the others are asked for: a job cut
    # short by a takeover is queued again behind those queued meanwhile,
    # and the oldest entry would be another (CI, event: many1 then hit).
    if ($i == 1) {
        wait_hit('/cache/many1.html', 'br');
        settle();
    }
}
my $written = -1;
wait_for(sub {
    fetch_noted('/cache/hot.html', 'br');       # kept recent
    my $s = status_json()->{cache};
    my $w = $s->{dirs}[0]{written};
    my $done = $s->{queue} == 0 && $w == $written;
    $written = $w;
    sleep 0.5;
    $done && (fetch_noted('/cache/many20.html', 'zstd'))[1]{cache} eq 'hit';
}, $one ? 300 : 90);        # valgrind: 6 s a file at the strongest levels
# Evicted files outlive their eviction by 5 s, and a worker that takes
# over (children come and go) counts the ones it finds and evicts them
# again.
my $total;
wait_for(sub {
    $total = 0;
    $total += -s "$cdir/$_" // 0
        for grep { /^[0-9a-f]{16}\.(br|gz|zst)$/ } cache_files();
    $total <= $max;
}, 30);
ok t_cmp($total <= $max ? 1 : 0, 1, "on disk $total <= MAXSIZE $max");
my $s = status_json()->{cache};
ok t_cmp($s->{evictions} > $ev0 ? 1 : 0, 1, "evicted ($s->{evictions})");
ok t_cmp($s->{bytes} <= $max ? 1 : 0, 1, "counted $s->{bytes} <= $max");
($r, $n) = fetch_noted('/cache/hot.html', 'br');
ok t_cmp($n->{cache}, 'hit', 'the entry in use stays');
($r, $n) = fetch_noted('/cache/many1.html', 'br');
ok t_cmp($n->{cache}, 'miss', 'the oldest went first');
ok t_cmp(decode_body($r), $rand[0]);
($r, $n) = fetch_noted('/cache/many20.html', 'br');
ok t_cmp($n->{cache}, 'hit', 'the newest stays');
ok t_cmp(decode_body($r), $rand[19]);

# ---- the status page ----------------------------------------------------------------------
$s = status_json()->{cache};
for my $k (qw(entries bytes hits misses hit_ratio queue queue_max evictions
              working worker_pid idle idle_below dirs)) {
    ok exists $s->{$k};
}
ok t_cmp($s->{dirs}[0]{dir}, $cdir);
ok t_cmp($s->{hit_ratio} > 0 && $s->{hit_ratio} < 1 ? 1 : 0, 1,
         "hit ratio $s->{hit_ratio}");
ok t_cmp(($s->{entries} > 0 && $s->{hits} > 0 && $s->{misses} > 0) ? 1 : 0, 1);
ok t_cmp(fetch('/adf-status')->content, qr/Compressed cache/, 'the HTML page');
ok t_cmp(fetch('/server-status?auto')->content,
         qr/^AdaptiveDeflateCacheHits: \d+$/m, "mod_status's section");

