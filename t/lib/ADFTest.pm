package ADFTest;
# Helpers shared by the Apache::Test files: fetch, decode with independent
# decoders (zlib's gunzip, the brotli command), read fixtures and notes.
use strict;
use warnings FATAL => 'all';

use Apache::Test ();
use Apache::TestRequest ();
use Apache::TestUtil ();
use Digest::SHA ();
use IO::Socket::INET ();
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use File::Temp qw(tempfile tempdir);
use Time::HiRes qw(sleep);
use JSON::PP ();
use MIME::Base64 ();
use Exporter 'import';

our @EXPORT = qw(docroot fetch head gunzip_ok unbrotli unzstd decode_body slurp
                 spew gzip_xfl note_for set_load wait_for vary_count
                 serverroot compress_to make_sibling mark_sibling load_file
                 idle page old_time code_body holds scratch_server
                 stop_scratch_server codings built if_built decode_as
                 sibling_ext refused_cgi_posts status_json fetch_noted
                 uncoded probe error_log log_count restart wait_hit worker_state
                 needs_root config_check one_child_server undcz
                 available_dictionary scratch_dir mapped deploy_file
                 wait_advertised level9_bytes);

# The codings the module under test has, as its build's configure decided
# (scripts/run-httpd-tests passes them): the tests assert what this build
# does, with and without each optional coding, and never skip.
my @codings = split ' ', ($ENV{ADF_CODINGS}
    // die "ADF_CODINGS is not set: run the suite with scripts/run-httpd-tests\n");
my %built = map { $_ => 1 } @codings;
sub codings { @codings }
sub built { $built{$_[0]} }
# $coding where the build has it, else $otherwise.
sub if_built {
    my ($coding, $otherwise) = @_;
    return $built{$coding} ? $coding : $otherwise;
}

sub docroot { Apache::Test::vars('documentroot') }
sub serverroot { Apache::Test::vars('serverroot') }

sub fetch {
    my ($url, @headers) = @_;
    return Apache::TestRequest::GET($url, @headers);
}

sub head {
    my ($url, @headers) = @_;
    return Apache::TestRequest::HEAD($url, @headers);
}

# gunzip strictly (CRC and length checked); undef on any error.
sub gunzip_ok {
    my ($bytes) = @_;
    my $out;
    gunzip(\$bytes => \$out, Transparent => 0, Strict => 1) or return undef;
    return $out;
}

# $bytes decoded by the reference tool $cmd (given a file's name last);
# undef when it fails.
sub decode_with {
    my ($cmd, $bytes) = @_;
    my ($fh, $name) = tempfile(UNLINK => 1);
    binmode $fh;
    print $fh $bytes;
    close $fh;
    my $out = `$cmd "$name" 2>/dev/null`;
    return $? == 0 ? $out : undef;
}

sub unbrotli { decode_with('brotli -d -c', $_[0]) }

# zstd as an HTTP client may decode it: no window above 8 MB (RFC 9659).
sub unzstd { decode_with('zstd -q -d -c --memory=8MB', $_[0]) }

# A dcz body (RFC 9842) decoded against the dictionary $dict by the zstd
# command (--patch-from: the dictionary as raw content), once its header
# is the skippable frame's and names $dict's SHA-256; undef otherwise.
sub undcz {
    my ($bytes, $dict) = @_;
    return undef unless length($bytes) >= 40
        && substr($bytes, 0, 8) eq "\x5e\x2a\x4d\x18\x20\0\0\0"
        && substr($bytes, 8, 32) eq Digest::SHA::sha256($dict);
    my ($fh, $name) = tempfile(UNLINK => 1);
    binmode $fh;
    print $fh $dict;
    close $fh;
    return decode_with("zstd -q -d -c --patch-from='$name'",
                       substr($bytes, 40));
}

# The Available-Dictionary value naming $dict: its SHA-256 as an
# sf-binary.
sub available_dictionary {
    my ($dict) = @_;
    return ':' . MIME::Base64::encode_base64(Digest::SHA::sha256($dict), '')
           . ':';
}

# $bytes decoded as Content-Encoding $coding ('' for identity); undef
# when they are not that.
sub decode_as {
    my ($coding, $bytes) = @_;
    return $bytes if $coding eq '';
    return gunzip_ok($bytes) if $coding eq 'gzip';
    return unbrotli($bytes) if $coding eq 'br';
    return unzstd($bytes) if $coding eq 'zstd';
    return undef;
}

sub decode_body {
    my ($res) = @_;
    return decode_as($res->header('Content-Encoding') // '', $res->content);
}

sub sibling_ext { { gzip => '.gz', br => '.br', zstd => '.zst' }->{$_[0]} }

sub slurp {
    my ($file) = @_;
    open my $fh, '<:raw', $file or die "$file: $!";
    local $/;
    return scalar <$fh>;
}

sub spew {
    my ($file, $data) = @_;
    open my $fh, '>:raw', $file or die "$file: $!";
    print $fh $data;
    close $fh or die "$file: $!";
}

# The XFL byte zlib writes: 2 for level 9, 4 for level 1.
sub gzip_xfl {
    my ($bytes) = @_;
    return length($bytes) > 9 ? ord(substr($bytes, 8, 1)) : -1;
}

# Whether the gzip body $bytes of $path is as small as the module's own
# fixed level 9 makes it (/level9$path: t/conf/features/level9.conf.in):
# the top of the frontier at light load.  It need not be level 9 itself:
# where the bodies seen so far show a lower level as small for less CPU,
# the frontier leaves 9 out.  'as small as level 9', or the two sizes.
sub level9_bytes {
    my ($bytes, $path) = @_;
    my $r = fetch("/level9$path", 'Accept-Encoding' => 'gzip');
    my $n = note_for(qr{^GET /level9\Q$path\E });
    die "/level9$path: not level 9 ($n->{level}, $n->{reason})\n"
        unless $n->{level} eq '9' && gzip_xfl($r->content) == 2;
    return length($bytes) <= length($r->content)
        ? 'as small as level 9'
        : length($bytes) . ' B, level 9 makes ' . length($r->content);
}

# The notes logged for the last request line matching $re.
sub note_for {
    my ($re) = @_;
    my $log = serverroot() . '/logs/adf_log';
    for (1 .. 50) {
        if (open my $fh, '<', $log) {
            my @hits = grep { /$re/ } <$fh>;
            if (@hits) {
                my %n = $hits[-1] =~ /(\w+)=(\S*)/g;
                return \%n;
            }
        }
        sleep 0.1;
    }
    return {};
}

# The load file named in extra.conf.in: a quote and a backslash in its
# name, so the status page's JSON must escape them.
sub load_file { serverroot() . '/logs/load"q\\x' }

sub set_load {
    my ($pct) = @_;
    my $file = load_file();
    spew("$file.tmp", "$pct\n");
    rename "$file.tmp", $file or die "rename: $!";
}

# $n chunked POSTs over LimitRequestBody to a CGI (t/conf/extra.conf.in,
# cgi/small): the body fails after mod_cgi forked the script's process,
# and httpd kills that process as it starts.  The statuses answered, as
# "413: 30".
sub refused_cgi_posts {
    my ($n) = @_;
    my $small = docroot() . '/cgi/small';
    unless (-e "$small/echo.cgi") {
        mkdir $small;
        spew("$small/echo.cgi", "#!/bin/sh\nprintf 'Content-Type: text/plain\\n\\n'\ncat\n");
        chmod 0755, $small, "$small/echo.cgi";
    }
    my $body = 'a' x 3600;
    my (%codes, $lost);
    for (1 .. $n) {
        my $line = '';
        # The 413 goes out while httpd kills the script's process, and the
        # connection is closed with the rest of the body unread: now and
        # then (1 in 30, once in a CI run) the reset overtakes the status
        # line and the client reads nothing.  Such a request is sent again
        # (twice at most); every loss is reported.
        for my $try (1 .. 3) {
            my $s = IO::Socket::INET->new(PeerAddr => Apache::Test::vars('servername'),
                                          PeerPort => Apache::Test::vars('port'));
            if ($s) {
                print $s "POST /cgi/small/echo.cgi HTTP/1.1\r\nHost: localhost\r\n"
                         . "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                         . sprintf("%x\r\n%s\r\n0\r\n\r\n", length $body, $body);
                $line = <$s> // '';
                close $s;
            }
            last if $line =~ m{^HTTP/};
            $lost++;
        }
        $codes{$line =~ m{^HTTP/1\.1 (\d+)} ? $1 : 'none'}++;
    }
    print "# refused_cgi_posts: $lost of the requests read no status line and were sent again\n"
        if $lost;
    return join ' ', map { "$_: $codes{$_}" } sort keys %codes;
}

# A light, fresh load signal (5 %): the controller at full effort.  The
# suite's load file does not exist until a test writes it, and without a
# signal the module compresses at the lowest level.
sub idle {
    set_load(5);
    wait_for(sub {
        my $l = eval { status_json()->{load} } || {};
        defined $l->{raw} && $l->{raw} == 5 && !$l->{stale}
            && $l->{effort} == 1;
    }, 10) or die 'no idle load signal';
}

# The status page's JSON (/adf-status?json, docs/monitoring.md): the
# suite's server's, or with $base (a URL such as scratch_server returns)
# that server's, asked through $ua (default: Apache::Test's agent).  Dies
# unless the page answers 200.
sub status_json {
    my ($base, $ua) = @_;
    my $r = defined $base
        ? ($ua // Apache::TestRequest::user_agent())->get("$base/adf-status?json")
        : fetch('/adf-status?json');
    die 'status page: ' . $r->status_line . "\n" unless $r->is_success;
    return JSON::PP::decode_json($r->content);
}

# GET $path with a query string of its own (added to any it has), with
# Accept-Encoding $ae (none when undef) and @headers: the response, and
# the notes logged for exactly that request (note_for).  The tag holds
# the test's pid: no other request of the run has it.
my $noted = 0;
sub fetch_noted {
    my ($path, $ae, @headers) = @_;
    my $url = $path . ($path =~ /\?/ ? '&' : '?') . "n=$$." . ++$noted;
    my $r = fetch($url, defined $ae ? ('Accept-Encoding' => $ae) : (),
                  @headers);
    return ($r, note_for(qr{^\S+ \Q$url\E }));
}

# A gzip request for /index.html of its own, and its notes: what the
# controller decides at this moment (load.t, signal.t).
sub probe { fetch_noted('/index.html', 'gzip') }

# A response the module left as it is, and why (three assertions): no
# Content-Encoding, the status $code, and the reason it noted
# (docs/directives.md, "Reasons"; '-' where its filter never decided:
# AdaptiveDeflate Off, an error page httpd made itself).  $n is the
# request's notes (fetch_noted).
sub uncoded {
    my ($r, $n, $code, $reason, $what) = @_;
    Apache::Test::ok(Apache::TestUtil::t_cmp($r->header('Content-Encoding'),
                                             undef, "$what: not encoded"));
    Apache::Test::ok(Apache::TestUtil::t_cmp($r->code, $code,
                                             "$what: status $code"));
    Apache::Test::ok(Apache::TestUtil::t_cmp($n->{reason} // '(no note)',
                                             $reason, "$what: reason $reason"));
}

# The suite's error log, and how often $re matches in it.
sub error_log { slurp(serverroot() . '/logs/error_log') }
sub log_count {
    my ($re) = @_;
    return scalar(() = error_log() =~ /$re/g);
}

# Restart the suite's server with signal $sig (USR1: graceful, HUP: full)
# and wait until it logged "resuming normal operations" once more and its
# status page answers.  Not under ADF_VALGRIND's one process (-X): a
# signal ends it.
sub restart {
    my ($sig) = @_;
    my $parent = slurp(serverroot() . '/logs/httpd.pid') + 0;
    my $resumed = log_count(qr/resuming normal operations/);
    kill $sig, $parent or die "kill $sig $parent: $!";
    wait_for(sub {
        log_count(qr/resuming normal operations/) > $resumed
            && eval { status_json(); 1 };
    }, 20) or die "no restart after SIG$sig";
}

# A new version of $dir/$name, as a deploy puts it: written under a
# temporary name, dated 100 s ago (settled), renamed into place.
sub deploy_file {
    my ($dir, $name, $data) = @_;
    spew("$dir/.$name", $data);
    chmod 0644, "$dir/.$name";
    utime time - 100, time - 100, "$dir/.$name";
    rename "$dir/.$name", "$dir/$name" or die "rename: $!";
}

# $path asked (as fetch_noted, with $ae) until its version is advertised
# as a dictionary (Use-As-Dictionary), for at most 30 s; $z false (a build
# without zstd): once.  The last response.
sub wait_advertised {
    my ($path, $ae, $z) = @_;
    my $r;
    wait_for(sub {
        ($r) = fetch_noted($path, $ae);
        !$z || defined $r->header('Use-As-Dictionary');
    }, 30);
    return $r;
}

# Ask for $path with Accept-Encoding $ae until AdaptiveDeflateCache
# answers (each miss queues the file again), at most $secs (150) seconds:
# the last response and its notes; a wait that fails says where the
# worker is.  Once a second, not ten times: each ask is a connection, and
# under prefork (MaxConnectionsPerChild 40) asks that fast end children
# every few seconds, while mod_watchdog runs a singleton it passed to
# another child only after 10 s there: in CI the worker was away 94 s to
# over 150 s (docs/reliability.md, the cache worker away under prefork).
sub wait_hit {
    my ($path, $ae, $secs) = @_;
    my ($r, $n);
    wait_for(sub {
        ($r, $n) = fetch_noted($path, $ae);
        ($n->{cache} // '') eq 'hit';
    }, $secs || 150, 1)
        or print "# no hit for $path ($ae): ",
                 (eval { worker_state() } // "($@)"), "\n";
    return ($r, $n);
}

# Where the cache's worker is, for a failure's log: its last pid, and that
# process's state and threads' wait channels (or that it is gone).
sub worker_state {
    my $c = status_json()->{cache};
    my $pid = $c->{worker_pid} || 0;
    my $st = -e "/proc/$pid/stat" ? (split ' ', slurp("/proc/$pid/stat"))[2]
                                  : 'gone';
    my @wchan = map { my $w = "$_/wchan"; -e $w ? slurp($w) : '?' }
                glob("/proc/$pid/task/*");
    return "queue $c->{queue}, working $c->{working}, worker pid $pid: "
           . "$st, threads @wchan";
}

# A part of a test that needs root (chown to another user, mount): true
# as root; otherwise $n failed assertions saying so, never a shorter plan
# (CI runs as root).
sub needs_root {
    my ($n, $what) = @_;
    return 1 if $> == 0;
    holds(0, "$what: needs root (run the suite as root, as CI does)")
        for 1 .. $n;
    return 0;
}

# apache2 -t on a minimal configuration (this module, prefork, the
# children as nobody when root) followed by $body, written to
# $dir/httpd.conf: (exit status, output, the file's name, the line number
# of $body's first line).
sub config_check {
    my ($dir, $body) = @_;
    my $moddir = `apxs -q LIBEXECDIR`;
    chomp $moddir;
    my $user = $> == 0 ? "User nobody\nGroup nogroup\n" : '';
    my $head = <<"CONF";
ServerRoot "$dir"
ServerName 127.0.0.1
Listen 127.0.0.1:1
PidFile "$dir/httpd.pid"
ErrorLog "$dir/error_log"
${user}LoadModule mpm_prefork_module $moddir/mod_mpm_prefork.so
LoadModule authz_core_module $moddir/mod_authz_core.so
LoadModule adaptive_deflate_module $ENV{ADF_MODULE}
CONF
    my ($conf, $httpd) = ("$dir/httpd.conf", httpd_bin());
    spew($conf, $head . $body);
    my $out = `'$httpd' -t -f '$conf' 2>&1`;
    return ($? >> 8, $out, $conf, 1 + (() = $head =~ /\n/g));
}

# Compress $data with the reference tools into $file.
sub compress_to {
    my ($coding, $data, $file) = @_;
    my $cmd = { gzip => "gzip -9n -c", br => "brotli -q 11 -c",
                zstd => "zstd -q -19 -c" }->{$coding};
    open my $p, '|-', "$cmd > '$file'" or die "$cmd: $!";
    binmode $p;
    print $p $data;
    close $p or die "$cmd failed";
}

# Mark sibling $s as holding $f as it is now (adf_ident.h), the way
# adaptive-precompress does: version 3, with the SHA-256 of $s's bytes;
# $version 2 as an earlier release did, without it.
sub mark_sibling {
    my ($f, $s, $version) = @_;
    my ($ino, $size, $mt, $ct) = split ' ', `stat -c '%i %s %.9Y %.9Z' '$f'`;
    my $mark = "ino=$ino size=$size mtime=$mt ctime=$ct";
    $mark = ($version // 3) == 2 ? "2 $mark"
          : "3 $mark sha256=" . Digest::SHA::sha256_hex(slurp($s));
    # as the tool marks one: with F's mtime (a sibling whose mtime is not
    # F's was written over since its mark)
    system('touch', '-r', $f, $s) == 0 or die "touch -r $f $s";
    system('setfattr', '-n', 'user.adaptive_deflate', '-v', $mark, $s) == 0
        or die "setfattr $s";
}

# A sibling of $f made the way adaptive-precompress makes one: $f's bytes
# (or $data) compressed, $f's mtime, and the mark.  Returns its path.
sub make_sibling {
    my ($f, $coding, $data) = @_;
    my $s = $f . sibling_ext($coding);
    compress_to($coding, defined $data ? $data : slurp($f), $s);
    system('touch', '-r', $f, $s) == 0 or die "touch -r $f $s";
    chmod 0644, $s;
    mark_sibling($f, $s);
    return $s;
}

# Poll $cond (a sub) every $every seconds (0.1) until it is true or $secs
# pass.
sub wait_for {
    my ($cond, $secs, $every) = @_;
    my $end = time + ($secs || 10);
    while (time < $end) {
        return 1 if $cond->();
        sleep($every || 0.1);
    }
    return $cond->() ? 1 : 0;
}

sub vary_count {
    my ($res) = @_;
    my $n = 0;
    for my $v ($res->header('Vary')) {
        $n += () = $v =~ /accept-encoding/gi;
    }
    return $n;
}

# A time well in the past, the same for the whole test file: a file dated
# so gets a strong ETag and no same-second edits.
my $old = time - 1000;
sub old_time { $old }

# $file with $data, dated old_time(), and the siblings of @codings (those
# this build has) made the way adaptive-precompress makes them.
sub page {
    my ($file, $data, @codings) = @_;
    spew($file, $data);
    chmod 0644, $file;
    utime $old, $old, $file;
    make_sibling($file, $_) for grep { built($_) } @codings;
}

# The status and the body as a client would read it: decoded by its
# Content-Encoding, or (a sibling sent as a file of its own) by its bytes.
sub code_body {
    my ($r) = @_;
    my $b = decode_body($r) // $r->content;
    if (!defined $r->header('Content-Encoding')) {
        $b = gunzip_ok($b) // unbrotli($b) // $b;
    }
    return ($r->code, $b);
}

# ok() with a message (Apache::Test's ok takes an expected value second).
# How many mappings of files under $prefix (a path, or a directory with a
# trailing slash) the processes hold now (/proc/PID/maps): a held
# sibling or cache entry is one (adf_held.h), a response being sent from
# its file for the while it is sent.
sub mapped {
    my ($prefix) = @_;
    my $n = 0;
    for my $m (glob('/proc/[0-9]*/maps')) {
        open(my $fh, '<', $m) or next;
        $n += grep { index($_, " $prefix") >= 0 } <$fh>;
    }
    return $n;
}

sub holds {
    my ($cond, $msg) = @_;
    Apache::Test::ok(Apache::TestUtil::t_cmp($cond ? 'holds' : 'broken',
                                             'holds', $msg));
}

sub httpd_bin { $ENV{ADF_HTTPD} || '/usr/sbin/apache2' }

# A server of a test's own beside the suite's, in $dir (its documents in
# $dir/htdocs), under $mpm, with this module and $conf (@MODDIR@ is
# httpd's module directory), started with the environment %env.  On
# ADF_SCRATCH_PORT, or the suite's port + 50.  Returns its base URL.
# Scratch servers still running: a test that dies half-way must not leave
# one on the port for the next test file.
my %scratch;
END { local $?; stop_scratch_server($_) for keys %scratch }

sub scratch_server {
    my ($dir, $mpm, $conf, %env) = @_;
    my $port = $ENV{ADF_SCRATCH_PORT} || Apache::Test::vars('port') + 50;
    my $moddir = `apxs -q LIBEXECDIR`;
    chomp $moddir;
    $conf =~ s/\@MODDIR\@/$moddir/g;
    my $user = $> == 0 ? "User nobody\nGroup nogroup\n" : '';
    spew("$dir/httpd.conf", <<"CONF");
ServerRoot "$dir"
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile "$dir/httpd.pid"
ErrorLog "$dir/error_log"
LogLevel warn
$user
LoadModule mpm_${mpm}_module $moddir/mod_mpm_${mpm}.so
LoadModule authz_core_module $moddir/mod_authz_core.so
LoadModule mime_module $moddir/mod_mime.so
LoadModule adaptive_deflate_module $ENV{ADF_MODULE}
TypesConfig /etc/mime.types
DocumentRoot "$dir/htdocs"
<Directory "$dir/htdocs">
    Require all granted
</Directory>
$conf
CONF
    # the previous test's server may still be letting go of the port
    wait_for(sub { !IO::Socket::INET->new("127.0.0.1:$port") }, 20);
    {
        local @ENV{keys %env} = values %env;
        system(httpd_bin(), '-d', $dir, '-f', "$dir/httpd.conf", '-k',
               'start') == 0 or die "scratch server in $dir";
    }
    $scratch{$dir} = 1;
    # listening comes before the PidFile (slower under ASan or valgrind)
    wait_for(sub { IO::Socket::INET->new("127.0.0.1:$port")
                   && -s "$dir/httpd.pid" }, 20);
    return "http://127.0.0.1:$port";
}

# A scratch server in $dir for measuring what one process does: one
# event child (every connection lands in it), idle (its own load file,
# $dir/load, at 5 %: the controller at full effort), the status page and
# the module on; then $conf.  Its documents go in $dir/htdocs; started
# with the environment %env (a preload).  Returns its base URL.
sub one_child_server {
    my ($dir, $conf, %env) = @_;
    mkdir "$dir/htdocs";
    chmod 0755, $dir, "$dir/htdocs";
    spew("$dir/load", "5\n");
    chmod 0644, "$dir/load";
    return scratch_server($dir, 'event', <<"CONF" . $conf, %env);
ServerLimit 1
StartServers 1
ThreadsPerChild 16
MaxRequestWorkers 16
MinSpareThreads 1
MaxSpareThreads 16
<Location "/adf-status">
    SetHandler adaptive-deflate-status
</Location>
AdaptiveDeflate On
AdaptiveDeflateLoadSource file:$dir/load
AdaptiveDeflateLoadInterval 100ms
AdaptiveDeflateCPUTarget 50
AdaptiveDeflateCPULimit 95 90
CONF
}

# A temporary directory for a scratch server, readable by its children
# (nobody when root), with htdocs/page.html holding $page.
sub scratch_dir {
    my ($page) = @_;
    my $dir = tempdir(CLEANUP => 1);
    chmod 0755, $dir;
    mkdir "$dir/htdocs";
    chmod 0755, "$dir/htdocs";
    spew("$dir/htdocs/page.html", $page);
    chmod 0644, "$dir/htdocs/page.html";
    return $dir;
}

# Stopped the usual way; a server that outlives 20 s is killed, so that
# the next test's server finds the port free (and the failure shows).
sub stop_scratch_server {
    my ($dir) = @_;
    delete $scratch{$dir};
    my ($pid) = (-e "$dir/httpd.pid" ? slurp("$dir/httpd.pid") : '') =~ /(\d+)/;
    system(httpd_bin(), '-d', $dir, '-f', "$dir/httpd.conf", '-k', 'stop');
    return 1 if wait_for(sub { !-e "$dir/httpd.pid" }, 20);
    kill 'KILL', -$pid if $pid;       # its process group: the children too
    return 0;
}

1;
