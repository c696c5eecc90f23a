# What the module must never do: serve a sibling where the plain file
# would be processed or refused (by any rule: <Files>, <Location>, <If>,
# mod_rewrite, path info, a subrequest, a <Location> or Alias where
# precompressed serving is not in effect), or where a filter would change
# its bytes (SSI, Substitute, a handler, mod_charset_lite); give two byte
# sequences one strong ETag (FileETag MTime, mod_cache); compress a
# response twice; ignore headers other modules set; rewrite conditionals
# where it is off; let .htaccess raise the CPU cost; or run the
# compressor for a HEAD.
# Configuration: t/conf/features/security.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use File::Path qw(make_path);
use IO::Compress::Gzip qw(gzip $GzipError);
use MIME::Base64 qw(encode_base64);
use ADFTest;

plan tests => 119;

idle();

my $root = docroot();
my $g = "$root/guard";
make_path(map { "$g/$_" } qw(ssi subst cgi mv cgisrc pathinfo subreq scoped
                             charset ntsib ntadd etag modcache));
make_path("$root/locscope");
my $orig = slurp("$root/index.html");
my $r;

# ---- a sibling is never readable where its file is not --------------------
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
$r = fetch('/guard/open.html', 'Accept-Encoding' => 'gzip');
ok $r->content eq slurp("$g/open.html.gz");
ok t_cmp(fetch('/guard/private.html', 'Authorization' => $auth,
               'Accept-Encoding' => 'gzip')->header('Content-Encoding'),
         'gzip', 'and reaches whoever F reaches, encoded');
$r = fetch('/guard/dump.csv.gz');
ok t_cmp($r->code, 200, 'a .gz with no plain file is a file of its own');

# Path info: F.gz/ and F.br/x are authorised with a URI that F's
# URI-based rules (<Location>, <If>, a server-level RewriteRule [F])
# never see.  (sanity: what holds already, so that a failure below means
# what it says)
for my $n (qw(loc if rw)) {
    page("$g/pathinfo/$n.html", "TOP SECRET $n\n" x 100, qw(gzip br));
    ok t_cmp(fetch("/guard/pathinfo/$n.html")->code, 403, "sanity: $n.html");
    ok t_cmp(fetch("/guard/pathinfo/$n.html.gz")->code, qr/^40[34]$/,
             "sanity: $n.html.gz");
    for my $u ("/guard/pathinfo/$n.html.gz/", "/guard/pathinfo/$n.html.br/x") {
        my ($code, $body) = code_body(fetch($u));
        holds !($code == 200 && $body =~ /TOP SECRET/),
              "$u must be refused as $n.html is (got $code)";
    }
}

# Rules a subrequest does not run again (a RewriteRule [NS]; SetEnvIf,
# which runs once per request, with Require not env): F.gz must not be
# authorised by a subrequest for F.
for my $n (qw(ns env)) {
    page("$g/subreq/$n.html", "TOP SECRET $n\n" x 100, qw(gzip));
    ok t_cmp(fetch("/guard/subreq/$n.html")->code, 403, "sanity: $n.html");
    ok t_cmp(fetch("/guard/subreq/$n.html.gz")->code, qr/^40[34]$/,
             "$n.html.gz must be refused as $n.html is");
}

# Precompressed On scoped by <FilesMatch "\.html$">: the guard follows
# F's configuration, not the sibling's own.
page("$g/scoped/secret.html", "TOP SECRET scoped\n" x 100, qw(gzip br));
page("$g/scoped/open.html", $orig, qw(gzip br));
fetch('/guard/scoped/open.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(note_for(qr{^GET /guard/scoped/open.html })->{reason},
         'precompressed', 'sanity: siblings are served here');
ok t_cmp(fetch('/guard/scoped/secret.html')->code, 403, 'sanity: F refused');
ok t_cmp(fetch('/guard/scoped/secret.html.gz')->code, qr/^40[34]$/,
         'its sibling must be refused too');
{
    my ($code, $body) = code_body(fetch('/guard/scoped/secret',
                                        'Accept' => '*/*'));
    holds !($code == 200 && $body =~ /TOP SECRET/),
          "MultiViews must not serve the refused file's sibling (got $code)";
}
$r = fetch('/guard/scoped/open', 'Accept' => '*/*');
ok t_cmp($r->header('Content-Type'), qr{^text/html},
         'MultiViews must not answer with F.gz as application/gzip');

# A sibling (the tool's mark) is readable nowhere precompressed serving is
# not in effect for its URL: here it is On in a <Location>, and the same
# directory is reached through an Alias.
my $notes = "internal notes: db password hunter2\n" x 60;
page("$root/locscope/notes.md", $notes, qw(gzip br));
page("$root/locscope/open.html", $orig, qw(gzip br));
page("$root/locscope/a.html", $orig, qw(gzip br));
for my $u (qw(/locscope/notes.md /locscope-alias/notes.md)) {
    ok t_cmp(fetch($u)->code, 403, "sanity: $u is refused");
}
fetch('/locscope/open.html?n', 'Accept-Encoding' => 'gzip');
ok t_cmp(note_for(qr{^GET /locscope/open.html\?n })->{reason},
         'precompressed', 'sanity: siblings are served under the <Location>');
ok t_cmp(fetch('/locscope/notes.md.gz')->code, 404,
         'sanity: its sibling is not a resource there');
for my $u (qw(/locscope-alias/notes.md.gz /locscope-alias/notes.md.br)) {
    my ($code, $body) = code_body(fetch($u));
    holds !($code == 200 && $body =~ /hunter2/),
          "$u must not disclose the refused notes.md (got $code)";
}
$r = fetch('/locscope-alias/a', 'Accept' => '*/*');
ok t_cmp($r->header('Content-Type') // '', qr{^text/html},
         'MultiViews through the Alias must not answer with a sibling as a '
         . 'file of its own');
ok t_cmp(decode_body($r) // '', $orig, '... and sends the page');

# ---- every representation has its own strong validator --------------------
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

# On the fly, then a sibling written (adaptive-precompress at its
# strongest level): one strong ETag for two byte sequences would let a
# resumed download splice them.
{
    my $text = substr(slurp("$root/corpus/book.txt"), 0, 150000);
    my $c = if_built('br', 'gzip');
    page("$g/etag/page.html", $text);
    $r = fetch('/guard/etag/page.html', 'Accept-Encoding' => $c);
    my $fly = $r->content;
    my $tag = $r->header('ETag') // '';
    ok t_cmp($tag, qr/-$c"$/, 'sanity: compressed on the fly');
    make_sibling("$g/etag/page.html", $c);
    $r = fetch('/guard/etag/page.html', 'Accept-Encoding' => $c,
               'Range' => 'bytes=100-', 'If-Range' => $tag);
    my $joined = $r->code == 206 ? substr($fly, 0, 100) . $r->content
                                 : $r->content;
    ok t_cmp(decode_as($c, $joined) // 'CORRUPT', $text,
             "If-Range $tag: the resumed body decodes (got " . $r->code . ')');
}

# mod_cache (its quick handler, the default) must not store the sibling
# with the identity's ETag: gzip and identity bytes under one tag.
{
    my $cache = serverroot() . '/cache';
    make_path($cache);
    chmod 0777, $cache;
    page("$g/modcache/page.html", $orig, qw(gzip));
    fetch('/guard/modcache/page.html', 'Accept-Encoding' => 'gzip');
    $r = fetch('/guard/modcache/page.html', 'Accept-Encoding' => 'gzip');
    ok t_cmp($r->header('X-Cache') // '', qr/^HIT/, 'sanity: a cache hit');
    # (The quick handler serves hits around this module: identity bytes.)
    my $gz = $r->content;
    my $gzce = $r->header('Content-Encoding') // '';
    my $gztag = $r->header('ETag') // '';
    $r = fetch('/guard/modcache/page.html', 'Accept-Encoding' => 'identity');
    my $idtag = $r->header('ETag') // '';
    holds $gzce ne 'gzip' || $gztag ne $idtag,
          "gzip ($gztag) and identity ($idtag) bytes must not share a strong ETag";
    $r = fetch('/guard/modcache/page.html', 'Accept-Encoding' => 'gzip',
               'Range' => 'bytes=30-', 'If-Range' => $gztag);
    my $joined = $r->code == 206 ? substr($gz, 0, 30) . $r->content
                                 : $r->content;
    $joined = ($r->code == 206 ? $gzce : $r->header('Content-Encoding') // '')
              eq 'gzip' ? gunzip_ok($joined) : $joined;
    ok t_cmp($joined // 'CORRUPT', $orig,
             'a resumed download decodes (got ' . $r->code . ')');
}

# ---- siblings never bypass content filters or handlers ---------------------
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

# The same siblings requested directly must not disclose what F's filters
# and handlers never send (adaptive-precompress writes .shtml siblings):
# the SSI source, the text before Substitute, a script run by a handler
# that <FilesMatch> chose (Debian's PHP pattern).
page("$g/ssi/direct.shtml", $ssi, qw(gzip br));
page("$g/subst/direct.html", "<p>SECRET</p>\n" x 100, qw(gzip br));
page("$g/cgisrc/page.html", $script, qw(gzip));
chmod 0755, "$g/cgisrc/page.html";
$r = fetch('/guard/ssi/direct.shtml', 'Accept-Encoding' => 'gzip');
ok t_cmp(decode_body($r) // '', qr/^(?!.*HIDDEN-BRANCH).*Before/s,
         'sanity: F is processed by mod_include');
for my $u ('/guard/ssi/direct.shtml.gz', '/guard/ssi/direct.shtml.br') {
    my ($code, $body) = code_body(fetch($u));
    holds !($code == 200 && $body =~ /HIDDEN-BRANCH|<!--#/),
          "$u must not disclose the SSI source (got $code)";
}
{
    my ($code, $body) = code_body(fetch('/guard/subst/direct.html.gz'));
    holds !($code == 200 && $body =~ /SECRET/),
          "/guard/subst/direct.html.gz must not bypass Substitute (got $code)";
}
$r = fetch('/guard/cgisrc/page.html');
ok t_cmp($r->content, qr/generated/, 'sanity: F runs as a CGI');
{
    my ($code, $body) = code_body(fetch('/guard/cgisrc/page.html.gz'));
    holds !($code == 200 && $body =~ /hunter2/),
          "/guard/cgisrc/page.html.gz must not disclose the script (got $code)";
}

# mod_charset_lite (loaded after this module: its XLATEOUT runs after the
# swap) must not transcode a sibling's compressed bytes: the body decodes
# to what identity clients get.
my $latin = "<p>caf\xe9 cr\xe8me br\xfbl\xe9e</p>\n" x 200;
page("$g/charset/page.html", $latin, qw(gzip br));
my $want = fetch('/guard/charset/page.html')->content;
ok t_cmp($want, qr/caf\xc3\xa9/, 'sanity: identity is transcoded to UTF-8');
for my $ae (qw(gzip br)) {
    $r = fetch('/guard/charset/page.html', 'Accept-Encoding' => $ae);
    my $got = decode_body($r);
    holds defined $got && $got eq $want,
          "$ae: decodes to what identity clients get";
}

# ---- MultiViews negotiates real variants; siblings are not variants ---------
page("$g/mv/a.html", $orig, qw(gzip br));
my $n;
($r, $n) = fetch_noted('/guard/mv/a', undef, 'Accept' => '*/*');
ok t_cmp($r->code, 200, 'MultiViews: 200');
ok t_cmp($r->header('Content-Type'), qr{^text/html}, 'the HTML variant');
uncoded($r, $n, 200, 'not-accepted', 'MultiViews, no Accept-Encoding');
ok $r->content eq $orig;
$r = fetch('/guard/mv/a', 'Accept' => '*/*', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Content-Type'), qr{^text/html}, 'MultiViews + gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip');
ok t_cmp(decode_body($r), $orig);
$r = fetch('/guard/mv/a', 'Accept' => '*/*', 'Accept-Encoding' => 'br');
ok t_cmp($r->header('Content-Encoding'), if_built('br', undef),
         'MultiViews + br: sibling');
ok $r->content eq (built('br') ? slurp("$g/mv/a.html.br") : $orig);

# ---- a declared Content-Encoding is never encoded again --------------------
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

# ---- mod_headers' Cache-Control no-transform is honoured -------------------
for my $d (qw(ntset ntalways)) {
    mkdir "$root/$d";
    spew("$root/$d/page.html", $orig);
    ($r, $n) = fetch_noted("/$d/page.html", 'gzip');
    uncoded($r, $n, 200, 'no-transform', $d);
    ok t_cmp($r->header('Cache-Control'), qr/no-transform/, "$d: no-transform");
}
# ... also where a sibling would be served (the swap decides before
# mod_headers' fixup), and where it is added as a second Cache-Control
# line (after mod_expires' or another Header set).
page("$g/ntsib/page.html", $orig, qw(gzip br));
($r, $n) = fetch_noted('/guard/ntsib/page.html', 'gzip');
ok t_cmp($r->header('Cache-Control'), 'no-transform', 'sanity: the header');
uncoded($r, $n, 200, 'no-transform',
        'Header set Cache-Control no-transform: no sibling either (as on the fly)');
page("$g/ntadd/page.html", $orig);
($r, $n) = fetch_noted('/guard/ntadd/page.html', 'gzip');
ok t_cmp(join('|', $r->header('Cache-Control')), qr/no-transform/,
         'sanity: no-transform is sent');
uncoded($r, $n, 200, 'no-transform',
        'Header add Cache-Control no-transform is honoured');

# ---- conditionals reach the handler as sent where the module is off --------
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

# ---- .htaccess may switch, not raise the cost ------------------------------
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
ok t_cmp(error_log(), qr/AdaptiveDeflateGzipLevels not allowed here/,
         'and says why');

# ---- HEAD gets the headers without the compressor ---------------------------
my $h = head('/big.txt?head', 'Accept-Encoding' => 'gzip');
$n = note_for(qr{^HEAD /big.txt\?head });
ok t_cmp($h->header('Content-Encoding'), 'gzip', 'HEAD: compressed headers');
ok !defined $h->header('Content-Length');
ok t_cmp("$n->{coding} $n->{in} $n->{out}", 'gzip - -',
         'HEAD: nothing went through the compressor');

# ---- the filter inserted twice decides once --------------------------------
sub responses { status_json()->{responses} }
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
