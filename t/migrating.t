# docs/migrating.md, checked: what it tells mod_deflate and mod_brotli
# users to write instead, against the real httpd, next to stock
# mod_deflate doing the same job.  Configuration:
# t/conf/features/migrating.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use Apache::TestRequest ();
use File::Path qw(make_path);
use IO::Compress::Gzip qw(gzip $GzipError);
use Digest::MD5 qw(md5_hex);
use ADFTest;

plan tests => 6 * 3 + 7 + 2 + 5 + 5 + 9 + 8 + 4;

idle();
my $root = docroot();
my $page = slurp("$root/index.html");
my $jpeg = slurp("$root/corpus/photo.jpeg");

sub cgi {
    my ($file, $head, $body) = @_;
    spew($file, "#!/usr/bin/perl\nbinmode STDOUT;\nprint \"$head\\n\\n\";\n"
                . "print <DATA>;\n__DATA__\n$body");
    chmod 0755, $file;
}

# ---- SetOutputFilter: mod_deflate, this module as set, the equivalent ----
my %files = (
    'page.html'  => $page,
    'style.css'  => $page,                      # not in the suite's types
    'photo.jpeg' => $jpeg,
    'data.bin'   => $page,                      # application/octet-stream
    'short.txt'  => 'x' x 80,                   # below MinLength (100)
);
# Compressed (1) or not (0), by directory.
my %want = (
    #                page css jpeg bin short 404
    deflate => [qw(  1    1   1    1   1     1)],
    policy  => [qw(  1    0   0    0   0     0)],
    all     => [qw(  1    1   1    1   1     1)],
);
my @order = (qw(page.html style.css photo.jpeg data.bin short.txt),
             'notfound.cgi');
for my $d (qw(deflate policy all)) {
    make_path("$root/migrate/$d");
    spew("$root/migrate/$d/$_", $files{$_}) for keys %files;
    cgi("$root/migrate/$d/notfound.cgi",
        'Status: 404\nContent-Type: text/html', $page);
    my @got;
    for my $i (0 .. $#order) {
        my $r = fetch("/migrate/$d/$order[$i]", 'Accept-Encoding' => 'gzip');
        my $body = $files{ $order[$i] } // $page;
        my $gz = ($r->header('Content-Encoding') // '') eq 'gzip';
        # whatever it did, the body decodes to the file's bytes
        my $bytes = $gz ? gunzip_ok($r->content) : $r->content;
        push @got, ($bytes // '') eq $body ? ($gz ? 1 : 0) : 'corrupt';
        t_debug("$d/$order[$i]: " . $r->code . ' '
                . ($r->header('Content-Encoding') // 'identity'));
    }
    for my $i (0 .. $#order) {
        ok t_cmp($got[$i], $want{$d}[$i], "$d/$order[$i] compressed?");
    }
}

# ---- the policy's reasons where the filter was set by hand ---------------
my %reason = ('style.css' => 'type', 'photo.jpeg' => 'type',
              'data.bin' => 'type', 'short.txt' => 'min-length',
              'notfound.cgi' => 'status');
for my $f (sort keys %reason) {
    my $n = note_for(qr{^GET /migrate/policy/\Q$f\E });
    ok t_cmp($n->{reason}, $reason{$f}, "policy/$f: $reason{$f}");
}
# mod_deflate has no 304 for its own ETag (httpd bug 45023); this module
# has, also where its filter is set by hand.
my $r = fetch('/migrate/all/page.html', 'Accept-Encoding' => 'gzip');
my $etag = $r->header('ETag');
ok t_cmp($etag, qr/-ad-gzip"$/, 'own ETag for the gzip representation');
ok t_cmp(fetch('/migrate/all/page.html', 'Accept-Encoding' => 'gzip',
               'If-None-Match' => $etag)->code, 304, 'revalidates');
# Where mod_filter adds it by type (AdaptiveDeflate Off), the module hears
# of the response only after the handler compared the tags: it answers
# the client's tag itself.
make_path("$root/migrate/bytype");
spew("$root/migrate/bytype/page.html", $page);
$r = fetch('/migrate/bytype/page.html', 'Accept-Encoding' => 'gzip');
$etag = $r->header('ETag') // '';
ok t_cmp(($r->header('Content-Encoding') // '-') . " $etag", qr{^gzip W/"[^"]*-ad-gzip"$},
         'AddOutputFilterByType ADAPTIVE_DEFLATE: gzip, its own tag');
$r = fetch('/migrate/bytype/page.html', 'Accept-Encoding' => 'gzip',
           'If-None-Match' => $etag);
ok t_cmp($r->code . ' ' . ($r->header('ETag') // 'none'), "304 $etag",
         '... which revalidates, the 304 carrying it');

# ---- notes: DeflateFilterNote Input/Output/Ratio --------------------------
$r = fetch('/migrate/all/page.html?notes', 'Accept-Encoding' => 'gzip');
my $n = note_for(qr{^GET /migrate/all/page.html\?notes });
ok t_cmp($n->{in}, length $page, 'adaptive_deflate_in: bytes in');
ok t_cmp($n->{out}, length $r->content, 'adaptive_deflate_out: bytes sent');
ok t_cmp($n->{ratio}, int(length($r->content) * 100 / length $page),
         'adaptive_deflate_ratio: out x 100 / in');
$r = fetch('/migrate/deflate/page.html?notes', 'Accept-Encoding' => 'gzip');
my $dn = note_for(qr{^GET /migrate/deflate/page.html\?notes });
# mod_deflate's counts the deflate stream only, without gzip's 18 bytes
ok t_cmp($dn->{dr}, int((length($r->content) - 18) * 100 / length $page),
         "mod_deflate's Ratio note, for comparison");
ok t_cmp($n->{ratio} - $dn->{dr} >= 0, 1, 'ours counts the whole body');

# ---- DeflateCompressionLevel 6 / BrotliCompressionQuality 5 ---------------
make_path("$root/migrate/fixed");
spew("$root/migrate/fixed/page.html", $page);
$r = fetch('/migrate/fixed/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(gzip_xfl($r->content), 0, 'GzipLevels 6 6: level 6 (XFL 0)');
ok t_cmp(note_for(qr{^GET /migrate/fixed/page.html })->{level}, 6);
ok t_cmp(gunzip_ok($r->content), $page);
# (a build without brotli: br-only clients get the page as it is)
$r = fetch('/migrate/fixed/page.html?br', 'Accept-Encoding' => 'br');
ok t_cmp(note_for(qr{^GET /migrate/fixed/page.html\?br })->{level},
         built('br') ? 5 : 0, 'BrotliQualities 5 5: quality 5');
ok t_cmp(decode_body($r), $page);

# ---- the no-gzip image rule and no-brotli, replaced -----------------------
make_path("$root/migrate/on/nobr");
spew("$root/migrate/on/photo.jpeg", $jpeg);
spew("$root/migrate/on/page.html", $page);
spew("$root/migrate/on/nobr/page.html", $page);
($r, $n) = fetch_noted('/migrate/on/photo.jpeg', 'gzip');
uncoded($r, $n, 200, 'type', 'image: by type, no env');
ok t_cmp(vary_count($r), 0, 'no Vary: it could never differ');
($r, $n) = fetch_noted('/migrate/on/page.html', 'gzip',
                       'User-Agent' => 'NoGzipBot');
uncoded($r, $n, 200, 'env', 'no-gzip still honoured');
$r = fetch('/migrate/on/nobr/page.html', 'Accept-Encoding' => 'br, gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'Encodings gzip: no br');
ok t_cmp(gunzip_ok($r->content), $page);

# ---- the mod_rewrite precompressed recipe, replaced -----------------------
make_path("$root/migrate/static");
my ($css, $js) = ("body{color:#222}\n" x 40, "var x = 1;\n" x 60);
spew("$root/migrate/static/app.css", $css);
spew("$root/migrate/static/app.js", $js);
make_sibling("$root/migrate/static/app.css", 'gzip');
my $js_coding = if_built('br', 'gzip');
make_sibling("$root/migrate/static/app.js", $js_coding);
$r = fetch('/migrate/static/app.css', 'Accept-Encoding' => 'gzip');
ok t_cmp(note_for(qr{^GET /migrate/static/app.css })->{reason},
         'precompressed', 'app.css.gz served for app.css');
ok t_cmp($r->header('Content-Type'), qr{^text/css}, "app.css's type");
ok t_cmp(gunzip_ok($r->content), $css);
$r = fetch('/migrate/static/app.js', 'Accept-Encoding' => 'gzip, br');
ok t_cmp($r->header('Content-Encoding'), $js_coding,
         "app.js's sibling for app.js");
ok t_cmp(decode_body($r), $js);
ok t_cmp(vary_count($r), 1, 'Vary: Accept-Encoding, once');
# Deployed without re-running the tool: the recipe would serve the old
# .gz; the sibling is ignored and the new file compressed on the fly.
sleep 1;
spew("$root/migrate/static/app.css", "$css/* v2 */\n");
$r = fetch('/migrate/static/app.css?v2', 'Accept-Encoding' => 'gzip');
ok t_cmp(gunzip_ok($r->content), "$css/* v2 */\n", 'stale .gz not served');
ok t_cmp(note_for(qr{^GET /migrate/static/app.css\?v2 })->{reason}, 'max');

# ---- request bodies: mod_deflate's DEFLATE input filter still works -------
make_path("$root/migrate/inflate/limit");
for my $d ('', '/limit') {
    spew("$root/migrate/inflate$d/echo.cgi", "#!/usr/bin/perl\n"
         . "use Digest::MD5 qw(md5_hex);\nbinmode STDIN;\nlocal \$/;\n"
         . "my \$b = <STDIN> // '';\n"
         . "print \"Content-Type: text/plain\\n\\n\", length(\$b), ' ',"
         . " md5_hex(\$b), \"\\n\";\n");
    chmod 0755, "$root/migrate/inflate$d/echo.cgi";
}
my $plain = "a request body that compresses well\n" x 100;
gzip(\$plain => \my $zipped) or die $GzipError;
$r = Apache::TestRequest::POST('/migrate/inflate/echo.cgi',
                               'Content-Encoding' => 'gzip',
                               content => $zipped);
ok t_cmp($r->code, 200);
ok t_cmp($r->content, length($plain) . ' ' . md5_hex($plain) . "\n",
         'the CGI read the inflated body (AdaptiveDeflate On here)');
$r = Apache::TestRequest::POST('/migrate/inflate/limit/echo.cgi',
                               'Content-Encoding' => 'gzip',
                               content => $zipped);
ok t_cmp($r->code, 413, 'DeflateInflateLimitRequestBody still applies');
ok t_cmp($r->content !~ /\Q${\ md5_hex($plain)}\E/, 1,
         'the CGI did not get the whole body');
