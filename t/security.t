# What the module must never do: serve a sibling where the plain file
# would be processed or refused, compress a response twice, ignore
# headers other modules set, rewrite conditionals where it is off, let
# .htaccess raise the CPU cost, or run the compressor for a HEAD.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use File::Path qw(make_path);
use IO::Compress::Gzip qw(gzip $GzipError);
use JSON::PP ();
use MIME::Base64 qw(encode_base64);
use ADFTest;

plan tests => 62;

idle();

my $root = docroot();
my $g = "$root/guard";
make_path(map { "$g/$_" } qw(ssi subst cgi mv));
my $orig = slurp("$root/index.html");

# ---- 3: a sibling is never readable where its file is not -----------------
page("$g/README.md", "# internal notes\n" x 50, qw(gzip br));
page("$g/secret.html", "top secret\n" x 50, qw(gzip br));
page("$g/private.html", "members only\n" x 50, qw(gzip));
page("$g/open.html", $orig, qw(gzip br));
spew("$g/dump.csv.gz", "not a sibling: an archive for download\n");
system('htpasswd', '-cbB', serverroot() . '/logs/htpasswd', 'alice', 'pw')
    == 0 or die 'htpasswd';
chmod 0644, serverroot() . '/logs/htpasswd';

for my $u (qw(README.md secret.html)) {
    ok t_cmp(fetch("/guard/$u", 'Accept-Encoding' => 'gzip, br')->code, 403,
             "/guard/$u is refused");
}
ok t_cmp(fetch('/guard/private.html')->code, 401, 'private.html asks');
# Where siblings are served, a sibling is an encoding of its file, not a
# resource of its own: requested directly it is not found, whoever asks.
my $auth = 'Basic ' . encode_base64('alice:pw', '');
for my $u (qw(README.md.gz README.md.br secret.html.gz secret.html.br
              private.html.gz open.html.gz open.html.br)) {
    ok t_cmp(fetch("/guard/$u", 'Authorization' => $auth)->code, 404,
             "/guard/$u is not a resource of its own");
}
my $r = fetch('/guard/open.html', 'Accept-Encoding' => 'gzip');
ok $r->content eq slurp("$g/open.html.gz");
ok t_cmp(fetch('/guard/private.html', 'Authorization' => $auth,
               'Accept-Encoding' => 'gzip')->header('Content-Encoding'),
         'gzip', 'and reaches whoever F reaches, encoded');
$r = fetch('/guard/dump.csv.gz');
ok t_cmp($r->code, 200, 'a .gz with no plain file is a file of its own');

# ---- 9: every representation has its own strong validator -----------------
# FileETag MTime: F and its siblings share an mtime.
my %etag;
for my $ae ('identity', grep { built($_) } qw(gzip br)) {
    $r = fetch('/guard/open.html', 'Accept-Encoding' => $ae);
    $etag{$ae} = $r->header('ETag');
}
my %tags = map { $_ => 1 } values %etag;
ok t_cmp(scalar(keys %tags), scalar(keys %etag),
         'one ETag per representation: ' . join(' ', sort values %etag));
$r = fetch('/guard/open.html', 'Accept-Encoding' => 'gzip',
           'Range' => 'bytes=0-99', 'If-Range' => $etag{identity});
ok t_cmp($r->code, 200, 'If-Range with the identity tag: no gzip range');
ok t_cmp(decode_body($r), $orig);

# ---- 2: siblings never bypass content filters or handlers ------------------
my $ssi = "<p>Before<!--#include virtual=\"/tiny.html\" -->After"
          . "<!--#if expr=\"1 = 2\" -->HIDDEN-BRANCH<!--#endif -->"
          . "<!-- server-side comment: db password -->\n" . ("x" x 2000);
page("$g/ssi/page.shtml", $ssi, qw(gzip br));
$r = fetch('/guard/ssi/page.shtml', 'Accept-Encoding' => 'gzip');
my $body = decode_body($r) // '';
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'SSI page compressed');
ok $body !~ /<!--#/ && $body !~ /HIDDEN-BRANCH/ && $body =~ /Before.*After/s;
ok t_cmp(note_for(qr{^GET /guard/ssi/page.shtml })->{reason}, qr/^(max|target)$/,
         'on the fly, not the sibling of the source');
page("$g/subst/page.html", "<p>SECRET</p>\n" x 100, qw(gzip br));
for my $ae (qw(gzip br)) {
    $r = fetch('/guard/subst/page.html', 'Accept-Encoding' => $ae);
    $body = decode_body($r) // '';
    ok $body =~ /REDACTED/ && $body !~ /SECRET/;
}
my $script = "#!/usr/bin/perl\n# source with credentials: hunter2\n"
             . "print \"Content-Type: text/html\\r\\n\\r\\n\";\n"
             . "print \"<p>generated</p>\\n\" x 100;\n";
spew("$g/cgi/page.html", $script);
chmod 0755, "$g/cgi/page.html";
make_sibling("$g/cgi/page.html", 'gzip');
$r = fetch('/guard/cgi/page.html', 'Accept-Encoding' => 'gzip');
$body = decode_body($r) // '';
ok $body =~ /generated/ && $body !~ /hunter2/;

# ---- 5: MultiViews negotiates real variants; siblings are not variants ------
page("$g/mv/a.html", $orig, qw(gzip br));
$r = fetch('/guard/mv/a', 'Accept' => '*/*');
ok t_cmp($r->code, 200, 'MultiViews: 200');
ok t_cmp($r->header('Content-Type'), qr{^text/html}, 'the HTML variant');
ok !defined $r->header('Content-Encoding');
ok $r->content eq $orig;
$r = fetch('/guard/mv/a', 'Accept' => '*/*', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Type'), qr{^text/html}, 'MultiViews + gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip');
ok t_cmp(decode_body($r), $orig);
$r = fetch('/guard/mv/a', 'Accept' => '*/*', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), if_built('br', undef),
         'MultiViews + br: sibling');
ok $r->content eq (built('br') ? slurp("$g/mv/a.html.br") : $orig);

# ---- 1: a declared Content-Encoding is never encoded again -----------------
my $plain = "line of an already compressed response\n" x 200;
for my $ae ('gzip', 'br', 'gzip, br') {
    $r = fetch('/cgi/encoded.cgi', 'Accept-Encoding' => $ae);
    my @ce = $r->header('Content-Encoding');
    ok t_cmp(join(',', @ce), 'gzip', "CGI gzip body, AE $ae: one coding");
    ok t_cmp(gunzip_ok($r->content), $plain, 'decodes once');
}
ok t_cmp(note_for(qr{^GET /cgi/encoded.cgi })->{reason}, 'encoded');
Apache::TestRequest::module('adf_early');
$r = fetch('/index.html', 'Accept-Encoding' => 'gzip, br');
ok t_cmp(join(',', $r->header('Content-Encoding')), 'gzip',
         'Header always set Content-Encoding early: one coding');
ok $r->content eq $orig;
Apache::TestRequest::module('default');

# ---- 8: mod_headers' Cache-Control no-transform is honoured ----------------
for my $d (qw(ntset ntalways)) {
    mkdir "$root/$d";
    spew("$root/$d/page.html", $orig);
    $r = fetch("/$d/page.html", 'Accept-Encoding' => 'gzip');
    ok !defined $r->header('Content-Encoding');
    ok t_cmp($r->header('Cache-Control'), qr/no-transform/, "$d: no-transform");
}

# ---- 10: conditionals reach the handler as sent where the module is off ----
mkdir "$root/cgioff";
spew("$root/cgioff/echo.cgi", "#!/usr/bin/perl\nprint \"Content-Type: "
     . "text/plain\\r\\n\\r\\n\";\nprint \"INM=\$ENV{HTTP_IF_NONE_MATCH}\\n"
     . "IM=\$ENV{HTTP_IF_MATCH}\\n\";\n");
chmod 0755, "$root/cgioff/echo.cgi";
$r = fetch('/cgioff/echo.cgi', 'Accept-Encoding' => 'gzip, br',
           'If-None-Match' => '"v1-gzip", "v2-br"');
ok t_cmp($r->content, qr/INM="v1-gzip", "v2-br"/, 'If-None-Match untouched');
mkdir "$root/plain";
my $pe = fetch('/plain/page.html')->header('ETag');
(my $suffixed = $pe) =~ s/"$/-gzip"/;
my @codes = map { fetch('/plain/page.html', 'If-Match' => $suffixed,
                        'Accept-Encoding' => $_)->code } ('gzip', 'identity');
ok t_cmp("@codes", '412 412', 'If-Match under Off does not depend on AE');

# ---- 11: .htaccess may switch, not raise the cost --------------------------
for my $case ([ 'levels', 'AdaptiveDeflateGzipLevels 9 9', 500 ],
              [ 'quality', 'AdaptiveDeflateBrotliQualities 11 11', 500 ],
              [ 'caps', 'AdaptiveDeflateSizeLevels *:9', 500 ],
              [ 'off', 'AdaptiveDeflate Off', 200 ]) {
    my ($d, $line, $want) = @$case;
    make_path("$root/htaccess/$d");
    spew("$root/htaccess/$d/.htaccess", "$line\n");
    spew("$root/htaccess/$d/page.html", $orig);
    chmod 0644, glob("$root/htaccess/$d/{.htaccess,page.html}");
    $r = fetch("/htaccess/$d/page.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->code, $want, ".htaccess: $line");
}
ok t_cmp(slurp(serverroot() . '/logs/error_log'),
         qr/AdaptiveDeflateGzipLevels not allowed here/, 'and says why');

# ---- 12: HEAD gets the headers without the compressor -----------------------
my $h = head('/big.txt?head', 'Accept-Encoding' => 'gzip');
my $n = note_for(qr{^HEAD /big.txt\?head });
ok t_cmp($h->header('Content-Encoding'), 'gzip', 'HEAD: compressed headers');
ok !defined $h->header('Content-Length');
ok t_cmp("$n->{coding} $n->{in} $n->{out}", 'gzip - -',
         'HEAD: nothing went through the compressor');

# ---- 17.1: the filter inserted twice decides once --------------------------
sub responses {
    JSON::PP::decode_json(fetch('/adf-status?json')->content)->{responses}
}
for my $d (qw(dup dupset)) {
    mkdir "$root/$d";
    spew("$root/$d/page.html", $orig);
    my $before = responses();
    $r = fetch("/$d/page.html", 'Accept-Encoding' => 'gzip');
    my $after = responses();
    $n = note_for(qr{^GET /$d/page.html });
    ok t_cmp($r->header('Content-Encoding'), 'gzip', "$d: compressed");
    ok t_cmp(decode_body($r), $orig, "$d: once");
    ok t_cmp("$n->{coding} $n->{reason}", 'gzip max', "$d: notes");
    # the page and the first status request
    ok t_cmp($after - $before, 2, "$d: counted once");
}
