# An outside audit of 81c7f6e ("Siblings under the plain file's rules, no
# double coding ..."): each block states what must hold and reproduces a
# way the commit does not hold it.  Sanity checks (what does work) are
# marked as such; see t/audit-findings.md for the write-up.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Basename qw(dirname);
use File::Path qw(make_path);
use Time::HiRes qw(sleep);
use ADFTest;

plan tests => 48;

idle();

my $root = docroot();
my $a = "$root/audit";
make_path(map { "$a/$_" } qw(cgisrc pathinfo subreq scoped charset ntsib
                             ntadd etag cache fresh tool));
make_path(map { "$root/guard/$_" } qw(ssi subst));
my $orig = slurp("$root/index.html");
my $old = old_time();

# The sibling swap compresses at full effort; keep the controller idle.
set_load(5);
wait_for(sub {
    fetch('/index.html?warm', 'Accept-Encoding' => 'gzip')
        ->header('Content-Encoding') }, 10);

# ---- A. a sibling requested directly discloses what F's filters and -------
# ---- handlers would never send (the tool writes .shtml siblings) ----------
my $ssi = "<p>Before<!--#include virtual=\"/tiny.html\" -->After"
          . "<!--#if expr=\"1 = 2\" -->HIDDEN-BRANCH<!--#endif -->\n"
          . ("x" x 2000);
page("$root/guard/ssi/audit.shtml", $ssi, qw(gzip br));
page("$root/guard/subst/audit.html", "<p>SECRET</p>\n" x 100, qw(gzip br));
my $script = "#!/usr/bin/perl\n# source with credentials: hunter2\n"
             . "print \"Content-Type: text/html\\r\\n\\r\\n\";\n"
             . "print \"<p>generated</p>\\n\" x 100;\n";
page("$a/cgisrc/page.html", $script, qw(gzip));
chmod 0755, "$a/cgisrc/page.html";

my $r = fetch('/guard/ssi/audit.shtml', 'Accept-Encoding' => 'gzip');
ok t_cmp(decode_body($r) // '', qr/^(?!.*HIDDEN-BRANCH).*Before/s,
         'sanity: F is processed by mod_include');
for my $u ('/guard/ssi/audit.shtml.gz', '/guard/ssi/audit.shtml.br') {
    my ($code, $body) = code_body(fetch($u));
    holds !($code == 200 && $body =~ /HIDDEN-BRANCH|<!--#/),
          "$u must not disclose the SSI source (got $code)";
}
my ($code, $body) = code_body(fetch('/guard/subst/audit.html.gz'));
holds !($code == 200 && $body =~ /SECRET/),
      "/guard/subst/audit.html.gz must not bypass Substitute (got $code)";
$r = fetch('/audit/cgisrc/page.html');
ok t_cmp($r->content, qr/generated/, 'sanity: F runs as a CGI');
($code, $body) = code_body(fetch('/audit/cgisrc/page.html.gz'));
holds !($code == 200 && $body =~ /hunter2/),
      "/audit/cgisrc/page.html.gz must not disclose the script (got $code)";

# ---- B. path info: F.gz/x is authorised with a URI F's rules never see ----
for my $n (qw(loc if rw)) {
    page("$a/pathinfo/$n.html", "TOP SECRET $n\n" x 100, qw(gzip br));
    ok t_cmp(fetch("/audit/pathinfo/$n.html")->code, 403, "sanity: $n.html");
    ok t_cmp(fetch("/audit/pathinfo/$n.html.gz")->code, qr/^40[34]$/,
             "sanity: $n.html.gz");
    for my $u ("/audit/pathinfo/$n.html.gz/", "/audit/pathinfo/$n.html.br/x") {
        ($code, $body) = code_body(fetch($u));
        holds !($code == 200 && $body =~ /TOP SECRET/),
              "$u must be refused as $n.html is (got $code)";
    }
}

# ---- C. rules a subrequest does not run again ------------------------------
for my $n (qw(ns env)) {
    page("$a/subreq/$n.html", "TOP SECRET $n\n" x 100, qw(gzip));
    ok t_cmp(fetch("/audit/subreq/$n.html")->code, 403, "sanity: $n.html");
    ok t_cmp(fetch("/audit/subreq/$n.html.gz")->code, qr/^40[34]$/,
             "$n.html.gz must be refused as $n.html is");
}

# ---- D. Precompressed On scoped by <FilesMatch "\.html$"> -----------------
page("$a/scoped/secret.html", "TOP SECRET scoped\n" x 100, qw(gzip br));
page("$a/scoped/open.html", $orig, qw(gzip br));
$r = fetch('/audit/scoped/open.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(note_for(qr{^GET /audit/scoped/open.html })->{reason},
         'precompressed', 'sanity: siblings are served here');
ok t_cmp(fetch('/audit/scoped/secret.html')->code, 403, 'sanity: F refused');
ok t_cmp(fetch('/audit/scoped/secret.html.gz')->code, qr/^40[34]$/,
         'its sibling must be refused too');
($code, $body) = code_body(fetch('/audit/scoped/secret', 'Accept' => '*/*'));
holds !($code == 200 && $body =~ /TOP SECRET/),
      "MultiViews must not serve the refused file's sibling (got $code)";
$r = fetch('/audit/scoped/open', 'Accept' => '*/*');
ok t_cmp($r->header('Content-Type'), qr{^text/html},
         'MultiViews must not answer with F.gz as application/gzip');

# ---- E. mod_charset_lite transcodes the sibling's compressed bytes ---------
my $latin = "<p>caf\xe9 cr\xe8me br\xfbl\xe9e</p>\n" x 200;
page("$a/charset/page.html", $latin, qw(gzip br));
my $want = fetch('/audit/charset/page.html')->content;
ok t_cmp($want, qr/caf\xc3\xa9/, 'sanity: identity is transcoded to UTF-8');
for my $ae (qw(gzip br)) {
    $r = fetch('/audit/charset/page.html', 'Accept-Encoding' => $ae);
    my $got = decode_body($r);
    holds defined $got && $got eq $want,
          "$ae: decodes to what identity clients get";
}

# ---- F. no-transform -------------------------------------------------------
page("$a/ntsib/page.html", $orig, qw(gzip br));
$r = fetch('/audit/ntsib/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('Cache-Control'), 'no-transform', 'sanity: the header');
holds !defined $r->header('Content-Encoding'),
      'Header set Cache-Control no-transform: no sibling either (as on the fly)';
page("$a/ntadd/page.html", $orig);
$r = fetch('/audit/ntadd/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp(join('|', $r->header('Cache-Control')), qr/no-transform/,
         'sanity: no-transform is sent');
holds !defined $r->header('Content-Encoding'),
      'Header add Cache-Control no-transform is honoured';

# ---- G. one strong ETag for two byte sequences (FileETag MTime) ------------
my $text = substr(slurp("$root/corpus/book.txt"), 0, 150000);
my $c = if_built('br', 'gzip');
page("$a/etag/page.html", $text);
$r = fetch('/audit/etag/page.html', 'Accept-Encoding' => $c);
my $fly = $r->content;
my $tag = $r->header('ETag') // '';
ok t_cmp($tag, qr/-$c"$/, 'sanity: compressed on the fly');
# adaptive-precompress runs (its strongest level); the client resumes its
# download.
make_sibling("$a/etag/page.html", $c);
$r = fetch('/audit/etag/page.html', 'Accept-Encoding' => $c,
           'Range' => 'bytes=100-', 'If-Range' => $tag);
my $joined = $r->code == 206 ? substr($fly, 0, 100) . $r->content
                             : $r->content;
ok t_cmp(decode_as($c, $joined) // 'CORRUPT', $text,
         "If-Range $tag: the resumed body decodes (got " . $r->code . ')');

# ---- H. mod_cache (quick handler) stores the sibling before the suffix -----
my $cache = serverroot() . '/cache';
make_path($cache);
chmod 0777, $cache;
page("$a/cache/page.html", $orig, qw(gzip));
fetch('/audit/cache/page.html', 'Accept-Encoding' => 'gzip');
$r = fetch('/audit/cache/page.html', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('X-Cache') // '', qr/^HIT/, 'sanity: a cache hit');
# (The quick handler serves hits around this module: identity bytes.)
my $gz = $r->content;
my $gzce = $r->header('Content-Encoding') // '';
my $gztag = $r->header('ETag') // '';
$r = fetch('/audit/cache/page.html', 'Accept-Encoding' => 'identity');
my $idtag = $r->header('ETag') // '';
holds $gzce ne 'gzip' || $gztag ne $idtag,
      "gzip ($gztag) and identity ($idtag) bytes must not share a strong ETag";
$r = fetch('/audit/cache/page.html', 'Accept-Encoding' => 'gzip',
           'Range' => 'bytes=30-', 'If-Range' => $gztag);
$joined = $r->code == 206 ? substr($gz, 0, 30) . $r->content : $r->content;
$joined = ($r->code == 206 ? $gzce : $r->header('Content-Encoding') // '')
          eq 'gzip' ? gunzip_ok($joined) : $joined;
ok t_cmp($joined // 'CORRUPT', $orig,
         'a resumed download decodes (got ' . $r->code . ')');

# ---- I. stale sibling made "fresh" by a change to its inode ----------------
# Release 2 of F with release 1's mtime (normalised build mtimes), the
# sibling from release 1 left behind; then a chmod / a hard link (backups
# with cp -al, rsnapshot) touch the sibling's inode.
for my $how (qw(chmod link)) {
    my $f = "$a/fresh/$how.html";
    page($f, "<p>RELEASE ONE</p>\n" x 100, qw(gzip));
    spew($f, "<p>RELEASE TWO</p>\n" x 100);
    utime $old, $old, $f;
    $r = fetch("/audit/fresh/$how.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp(decode_body($r), qr/RELEASE TWO/, "sanity: $how: stale before");
    sleep 0.02;
    if ($how eq 'chmod') {
        chmod 0644, "$f.gz";
    }
    else {
        link("$f.gz", "$f.gz.snapshot") or die "link: $!";
    }
    $r = fetch("/audit/fresh/$how.html", 'Accept-Encoding' => 'gzip');
    ok t_cmp(decode_body($r), qr/RELEASE TWO/,
             "$how of the old sibling: F's current bytes still");
}

# ---- J. the tool and the module disagree about freshness --------------------
my $tool = ($ENV{ADF_MODULE} // '') =~ m{^(.*)/\.libs/[^/]+$}
           ? "$1/tools/adaptive-precompress" : '';
if (-x $tool) {
    spew("$a/tool/page.html", $orig);
    chmod 0644, "$a/tool/page.html";
    utime $old, $old, "$a/tool/page.html";
    sleep 0.02;
    system($tool, '-q', "$a/tool") == 0 or die "$tool";
    my $mark = `getfattr --only-values -n user.adaptive_deflate $a/tool/page.html.gz 2>/dev/null`;
    ok t_cmp($mark, qr/^3 ino=\d+ size=\d+ mtime=\d+\.\d{9} ctime=\d+\.\d{9} sha256=[0-9a-f]{64}$/,
             'the tool marks the siblings it writes (adf_ident.h)');
    # A chmod -R over the tree after the run: F's ctime moves past the
    # sibling's; the module logs "rewrite it with adaptive-precompress".
    sleep 0.02;
    chmod 0644, "$a/tool/page.html";
    fetch('/audit/tool/page.html', 'Accept-Encoding' => 'gzip');
    ok t_cmp(note_for(qr{^GET /audit/tool/page.html })->{reason},
             qr/^(max|target)$/, 'sanity: the module calls it stale');
    system($tool, '-q', "$a/tool") == 0 or die "$tool";
    fetch('/audit/tool/page.html?again', 'Accept-Encoding' => 'gzip');
    ok t_cmp(note_for(qr{^GET /audit/tool/page.html\?again })->{reason},
             'precompressed', 'after the advised tool run it is served');
}
else {
    # The tool is built with the module: its absence is a broken build.
    holds 0, "adaptive-precompress beside the module ($tool)" for 1 .. 3;
}

# ---- K. conditionals rewritten for a validator the module did not make ----
$r = fetch('/cgi/selftag.cgi', 'Accept-Encoding' => 'gzip');
ok t_cmp($r->header('ETag'), '"v1-gzip"', "sanity: the script's own tag");
$r = fetch('/cgi/selftag.cgi', 'Accept-Encoding' => 'gzip',
           'If-None-Match' => '"v1-gzip"');
ok t_cmp($r->code, 304, 'the script sees its own tag and answers 304 (saw: '
         . ($r->header('X-Seen-If-None-Match') // '') . ')');
