# Every representation tells the truth behind a shared cache.  Varnish
# (http_gzip_support off: Accept-Encoding as the client sent it), nginx
# proxy_cache (proxy_cache_revalidate on) and httpd's own mod_cache, each
# started here on 127.0.0.1 in front of the adf_dict virtual host (a
# dictionary for /dyn/*), are asked by clients that accept different
# codings and hold different tags, while the load moves: idle (gzip at
# level 9), no load signal (level 1), over the CPU limit (identity), idle
# again; with conditional and Range requests and HEAD.  Whatever any
# client gets:
#   - every body decodes byte for byte to the file (a range spliced onto
#     the part the client held too);
#   - its tag names what it holds: the coding of its Content-Encoding,
#     weak for output made on the fly, the dictionary it was made with;
#   - one strong tag, one body;
#   - a 304 carries a tag the client sent, or none;
#   - no dcz for a request the fetch rule refuses (cross-site no-cors).
# (Clients that ask the server itself are held to the same rules.)
# A cache revalidating a copy stored at the CPU limit (identity) or at
# idle (gzip) keeps that copy, under its own tag.  Configuration:
# t/conf/features/caches.conf.in (dyn/caches/: fresh for a minute, or
# stale at once with X-Stale), dict.conf.in (the virtual host).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestRequest ();
use Apache::TestUtil;
use Digest::SHA qw(sha256_hex);
use File::Path qw(make_path);
use File::Temp qw(tempdir);
use HTTP::Request ();
use IO::Socket::INET ();
use LWP::UserAgent ();
use Time::HiRes qw(sleep);
use ADFTest;

my @caches = qw(varnish nginx mod_cache);
# per cache: it started; five rules; four signs that the scenario ran; the
# five rules for the clients that asked the server itself
plan tests => @caches * (1 + 5 + 4) + 5;

my $z = built('zstd');
my $root = docroot();
my $dict = slurp("$root/dict/site.dict");
my $dict16 = substr(sha256_hex($dict), 0, 16);
my $page = slurp("$root/corpus/page.html");
my @all = ('Accept-Encoding' => 'gzip, deflate, br, zstd, dcz',
           'Available-Dictionary' => available_dictionary($dict));

make_path("$root/dyn/caches");
for my $f (qw(keep relabel range dict)) {
    spew("$root/dyn/caches/$f.html", $page);
    chmod 0644, "$root/dyn/caches/$f.html";
    utime old_time(), old_time(), "$root/dyn/caches/$f.html";
}
Apache::TestRequest::module('adf_dict');
my ($oport) = Apache::TestRequest::hostport() =~ /:(\d+)$/;
my $origin = "http://127.0.0.1:$oport";
my $base = $ENV{ADF_SCRATCH_PORT} || Apache::Test::vars('port') + 50;
my $tmp = tempdir(CLEANUP => 1);
chmod 0755, $tmp;
my $root_user = $> == 0;

sub listening { IO::Socket::INET->new("127.0.0.1:$_[0]") ? 1 : 0 }

# ---- the caches -----------------------------------------------------------------
my (%url, %stop);

# Varnish: Accept-Encoding as sent; an object stored stale (max-age=0)
# kept for revalidation, none served stale (no grace).
sub start_varnish {
    my $port = $base + 5;
    my $d = "$tmp/varnish";
    make_path($d);
    chmod 0755, $d;
    spew("$d/adf.vcl", <<"VCL");
vcl 4.1;
backend origin { .host = "127.0.0.1"; .port = "$oport"; }
sub vcl_backend_response {
    set beresp.grace = 0s;
    set beresp.keep = 300s;
    if (beresp.http.Cache-Control ~ "max-age=0") {
        set beresp.ttl = 0.001s;
        return (deliver);
    }
}
VCL
    chmod 0644, "$d/adf.vcl";
    my $out = `varnishd -a 127.0.0.1:$port -f '$d/adf.vcl' -n '$d/work' -P '$d/pid' -p http_gzip_support=off -s malloc,32m 2>&1`;
    print "# varnishd: $out" if $?;
    $stop{varnish} = sub {
        my ($pid) = (-e "$d/pid" ? slurp("$d/pid") : '') =~ /(\d+)/;
        kill 'TERM', $pid if $pid;
        wait_for(sub { !listening($port) }, 10);
    };
    return wait_for(sub { listening($port) }, 10) ? "http://127.0.0.1:$port" : undef;
}

# nginx proxy_cache, revalidating what expired (proxy_cache_revalidate); a
# prefix and a configuration of its own.
sub start_nginx {
    my $port = $base + 6;
    my $d = "$tmp/nginx";
    make_path("$d/cache");
    chmod 0755, $d;
    my $user = $root_user ? 'user nobody nogroup;' : '';
    spew("$d/nginx.conf", <<"CONF");
$user
worker_processes 1;
pid $d/nginx.pid;
error_log $d/error.log warn;
events { worker_connections 64; }
http {
    access_log $d/access.log;
    client_body_temp_path $d/client_body;
    proxy_temp_path $d/proxy_temp;
    fastcgi_temp_path $d/fastcgi_temp;
    uwsgi_temp_path $d/uwsgi_temp;
    scgi_temp_path $d/scgi_temp;
    proxy_cache_path $d/cache levels=1 keys_zone=adf:1m max_size=64m;
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass $origin;
            proxy_http_version 1.1;
            proxy_cache adf;
            proxy_cache_revalidate on;
            # fresh for a minute; X-Accel-Expires (in the past) makes a
            # stale one, where max-age=0 would not be stored at all
            proxy_ignore_headers Cache-Control;
            proxy_cache_valid 200 60s;
            add_header X-Cache-Status \$upstream_cache_status always;
        }
    }
}
CONF
    my $out = `nginx -p '$d' -e '$d/error.log' -c '$d/nginx.conf' 2>&1`;
    print "# nginx: $out" if $?;
    $stop{nginx} = sub {
        system('nginx', '-p', $d, '-e', "$d/error.log", '-c', "$d/nginx.conf",
               '-s', 'stop');
        wait_for(sub { !-e "$d/nginx.pid" && !listening($port) }, 10);
    };
    return wait_for(sub { listening($port) }, 10) ? "http://127.0.0.1:$port" : undef;
}

# httpd's mod_cache (mod_cache_disk) in a server of its own, proxying;
# this module loaded and off there.  An expired response is stored too,
# to be revalidated.
sub start_mod_cache {
    my $d = "$tmp/mod_cache";
    make_path("$d/htdocs", "$d/cache");
    chmod 0755, $d, "$d/htdocs";
    chown scalar(getpwnam('nobody')), -1, "$d/cache" if $root_user;
    local $ENV{ADF_SCRATCH_PORT} = $base;
    my $u = eval { scratch_server($d, 'event', <<"CONF") };
LoadModule proxy_module \@MODDIR\@/mod_proxy.so
LoadModule proxy_http_module \@MODDIR\@/mod_proxy_http.so
LoadModule cache_module \@MODDIR\@/mod_cache.so
LoadModule cache_disk_module \@MODDIR\@/mod_cache_disk.so
ProxyPass "/" "$origin/"
CacheRoot "$d/cache"
CacheEnable disk "/"
CacheStoreExpired On
CacheIgnoreNoLastMod On
CacheHeader On
CONF
    print "# mod_cache: $@" if $@;
    $stop{mod_cache} = sub { stop_scratch_server($d) };
    return $u && listening($base) ? $u : undef;
}
END { $_->() for values %stop }

# ---- what every response must say ----------------------------------------------
my %bad;        # cache => rule => what went wrong
my %strong;     # strong tag => the SHA-256 of the one body it names
my @rules = ('bodies decode to the file', 'tags name what the body is',
             'one strong tag, one body', 'a 304 carries a tag the client sent',
             'no dcz where the fetch rule refuses it');

sub wrong {
    my ($c, $rule, $msg) = @_;
    push @{$bad{$c}{$rules[$rule]}}, $msg;
    print "# $c: $msg\n";
}

# What a tag says of its bytes: (weak, coding, made: fly, pre or cache,
# hex of the dictionary or the stored bytes), or () for no tag.
sub tag_says {
    my ($t) = @_;
    my ($w, $o) = ($t // '') =~ m{^(W/)?"(.*?)"?$} or return ();
    return ($w ? 1 : 0, '', 'identity', '')
        unless $o =~ /-ad-(gzip|br|zstd|dcz)(?:-([0-9a-f]{16})|-(pre|cache)\.([0-9a-f]{16}))?$/;
    return ($w ? 1 : 0, $1, $3 // 'fly', $2 // $4 // '');
}

sub bare { my ($t) = @_; $t =~ s{^W/}{}; $t }

sub decode {
    my ($ce, $bytes) = @_;
    return $ce eq 'dcz' ? undcz($bytes, $dict) : decode_as($ce, $bytes);
}

# Check response $r that client $who got through cache $c.  %o: held, the
# tags it sent in If-None-Match; refused, the fetch rule refuses it dcz;
# part, [the bytes it held, the tag it sent in If-Range].
sub see {
    my ($c, $who, $r, %o) = @_;
    my $code = $r->code;
    my $tag = $r->header('ETag');
    my $ce = $r->header('Content-Encoding') // '';
    my $what = "$who: $code " . ($ce || 'identity') . ' ' . ($tag // 'no tag');
    my $head = $r->request->method eq 'HEAD';

    if ($code == 304) {
        wrong($c, 3, "$what: not a tag it sent (@{$o{held} // []})")
            if defined $tag && !grep { bare($_) eq bare($tag) } @{$o{held} // []};
        return $r;
    }
    if ($code != 200 && $code != 206) {
        wrong($c, 0, "$what: status " . $r->status_line);
        return $r;
    }
    my ($weak, $coding, $made, $hex) = tag_says($tag);
    if (!defined $weak) {
        wrong($c, 1, "$what: no tag");
    }
    else {
        wrong($c, 1, "$what: the tag names " . ($coding || 'identity'))
            if $coding ne $ce;
        wrong($c, 1, "$what: a strong tag on output made on the fly")
            if $made eq 'fly' && $coding && !$weak;
        wrong($c, 1, "$what: the tag names another dictionary")
            if $coding eq 'dcz' && $hex ne $dict16;
    }
    wrong($c, 4, "$what: dcz") if $o{refused} && $ce eq 'dcz';
    return $r if $head;
    my $bytes = $r->content;
    if ($code == 206) {
        my ($from) = ($r->header('Content-Range') // '') =~ /^bytes (\d+)-/;
        my ($held, $if_range) = @{$o{part} // ['', '']};
        wrong($c, 2, "$what: a range of a tag the client did not send ($if_range)")
            if ($tag // '') ne $if_range;
        if (!defined $from || $from != length $held) {
            wrong($c, 0, "$what: a range it did not ask for");
            return $r;
        }
        $bytes = $held . $bytes;
    }
    my $decoded = decode($ce, $bytes);
    wrong($c, 0, "$what: " . length($bytes) . ' bytes that do not decode to the file'
                 . ($code == 206 ? ' (a range spliced onto the part it held)' : ''))
        unless defined $decoded && $decoded eq $page;
    if ($code == 200 && defined $weak && !$weak) {
        my $sha = sha256_hex($bytes);
        wrong($c, 2, "$what: this strong tag named another body")
            if ($strong{$tag} //= $sha) ne $sha;
    }
    return $r;
}

my $ua = LWP::UserAgent->new(keep_alive => 0, timeout => 30);
sub ask {
    my ($method, $url, @h) = @_;
    return $ua->request(HTTP::Request->new($method => $url, [@h]));
}

# The load: idle (the controller at full effort), no signal (the lowest
# level), over the CPU limit (identity).
sub no_signal {
    unlink load_file();
    wait_for(sub { ((probe())[1]{reason} // '') eq 'no-signal' }, 15)
        or print "# no 'no-signal' reason\n";
}
sub limited {
    set_load(99);
    wait_for(sub { status_json()->{load}{limited} }, 15)
        or print "# not limited\n";
}

# ---- start --------------------------------------------------------------------
my %start = (varnish => \&start_varnish, nginx => \&start_nginx,
             mod_cache => \&start_mod_cache);
$url{$_} = $start{$_}->() for @caches;
my @up = grep { $url{$_} } @caches;
my (%dcz, %kept, %revalidated);

idle();
for my $c (@up) {
    my $u = "$url{$c}/dyn/caches";
    # Clients holding gzip and br copies, stored stale by the cache.
    for my $client ([ 'gzip client', 'gzip' ], [ 'br client', 'br' ]) {
        my ($who, $ae) = @$client;
        see($c, $who, ask(GET => "$u/keep.html?c=$c", 'Accept-Encoding' => $ae,
                          'X-Stale' => 1));
    }
    # A client that got most of a gzip body straight from the server.
    my $r = see('server', 'direct client', ask(GET => "$origin/dyn/caches/range.html?c=$c",
                                               'Accept-Encoding' => 'gzip'));
    $kept{$c}{range} = [ substr($r->content, 0, length($r->content) / 2),
                         $r->header('ETag') // '' ];
    # The dictionary's answer, stored fresh; the cross-site no-cors
    # request with the same Accept-Encoding and Available-Dictionary.
    $r = see($c, 'same-origin dcz client',
             ask(GET => "$u/dict.html?c=$c", @all, 'Sec-Fetch-Site' => 'same-origin',
                 'Sec-Fetch-Mode' => 'cors'));
    $dcz{$c} = $r->header('Content-Encoding') // 'identity';
    see($c, 'cross-site no-cors client',
        ask(GET => "$u/dict.html?c=$c", @all, 'Sec-Fetch-Site' => 'cross-site',
            'Sec-Fetch-Mode' => 'no-cors'), refused => 1);
    see($c, 'same-origin dcz client, again',
        ask(GET => "$u/dict.html?c=$c", @all, 'Sec-Fetch-Site' => 'same-origin',
            'Sec-Fetch-Mode' => 'cors'));
}

# No load signal: gzip at level 1, another body of the same content.
no_signal();
for my $c (@up) {
    my $u = "$url{$c}/dyn/caches";
    see($c, 'another gzip client', ask(GET => "$u/range.html?c=$c",
                                       'Accept-Encoding' => 'gzip'));
    my ($held, $tag) = @{$kept{$c}{range}};
    see($c, 'direct client resuming',
        ask(GET => "$u/range.html?c=$c", 'Accept-Encoding' => 'gzip',
            'Range' => 'bytes=' . length($held) . '-', 'If-Range' => $tag),
        part => [ $held, $tag ]);
}

# Over the CPU limit: identity.  The copies held revalidate: gzip stays
# gzip, br stays br (no body sent); a copy stored now is identity.
limited();
for my $c (@up) {
    my $u = "$url{$c}/dyn/caches";
    my $r = see($c, 'identity at the limit',
                ask(GET => "$u/relabel.html?c=$c", 'Accept-Encoding' => 'gzip',
                    'X-Stale' => 1));
    $kept{$c}{identity} = $r->header('ETag') // '"none"';
    for my $client ([ 'gzip client', 'gzip' ], [ 'br client', 'br' ]) {
        my ($who, $ae) = @$client;
        my $r = see($c, "$who at the limit",
                    ask(GET => "$u/keep.html?c=$c", 'Accept-Encoding' => $ae,
                        'X-Stale' => 1));
        $kept{$c}{$ae} = $r->header('Content-Encoding') // 'identity';
        my $tag = $r->header('ETag') // '"none"';
        see($c, "$who revalidating", ask(GET => "$u/keep.html?c=$c",
                                         'Accept-Encoding' => $ae, 'X-Stale' => 1,
                                         'If-None-Match' => $tag), held => [ $tag ]);
        see($c, "$who, HEAD", ask(HEAD => "$u/keep.html?c=$c",
                                  'Accept-Encoding' => $ae));
        $kept{$c}{"$ae tag"} = $tag;
        # the same copy revalidated with the server itself
        see('server', "$who revalidating at the limit",
            ask(GET => "$origin/dyn/caches/keep.html?c=$c",
                'Accept-Encoding' => 'gzip, br', 'If-None-Match' => $tag),
            held => [ $tag ]);
    }
}

# Idle again: the identity copy revalidates, and stays identity.
idle();
for my $c (@up) {
    my $u = "$url{$c}/dyn/caches";
    my $r = see($c, 'identity client at idle',
                ask(GET => "$u/relabel.html?c=$c", 'Accept-Encoding' => 'gzip',
                    'X-Stale' => 1));
    my $tag = $r->header('ETag') // '"none"';
    see($c, 'identity client revalidating',
        ask(GET => "$u/relabel.html?c=$c", 'Accept-Encoding' => 'gzip',
            'X-Stale' => 1, 'If-None-Match' => $tag), held => [ $tag ]);
    see($c, 'gzip client at idle', ask(GET => "$u/keep.html?c=$c",
                                       'Accept-Encoding' => 'gzip'));
    # Clients holding the identity and br copies, at the server itself,
    # accepting gzip (which it would send now): 304 with their own tags.
    for my $h ([ relabel => $kept{$c}{identity} ],
               [ keep => $kept{$c}{'br tag'} // '"none"' ]) {
        my ($f, $held) = @$h;
        see('server', "a client holding $held",
            ask(GET => "$origin/dyn/caches/$f.html?c=$c",
                'Accept-Encoding' => 'gzip, br', 'If-None-Match' => $held),
            held => [ $held ]);
    }
}

# What the server answered the caches' revalidations with.
my $log = slurp(serverroot() . '/logs/adf_log');
for my $c (@up) {
    for my $f (qw(keep relabel)) {
        $revalidated{$c}{$f} = () = $log =~ m{^GET /dyn/caches/$f\.html\?c=$c HTTP/1\.[01] 304 }mg;
    }
}
$stop{$_}->() for keys %stop;
%stop = ();

for my $rule (@rules) {
    ok t_cmp(join(' | ', @{$bad{server}{$rule} // []}), '', "the server itself: $rule");
}
for my $c (@caches) {
    ok t_cmp($url{$c} ? 'started' : 'not started', 'started', "$c: started on 127.0.0.1");
    for my $rule (@rules) {
        ok t_cmp(join(' | ', @{$bad{$c}{$rule} // []}), '', "$c: $rule");
    }
    ok t_cmp($dcz{$c} // '-', $z ? 'dcz' : qr/^(gzip|br)$/,
             "$c: the same-origin client got " . ($z ? 'dcz' : 'no dcz (no zstd)'));
    ok t_cmp(join(' ', map { ($revalidated{$c}{$_} // 0) > 0 ? 1 : 0 } qw(keep relabel)),
             '1 1', "$c: it revalidated its copies with the server (304s: "
             . join(', ', map { $revalidated{$c}{$_} // 0 } qw(keep relabel)) . ')');
    ok t_cmp($kept{$c}{gzip} // '-', 'gzip',
             "$c: over the CPU limit, the gzip client keeps its gzip copy");
    ok t_cmp($kept{$c}{br} // '-', if_built('br', 'identity'),
             "$c: ... the br client its br copy");
}
