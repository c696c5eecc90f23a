# A sibling renamed over between its check and the send (a new one from
# adaptive-precompress, a deploy's rsync): what goes out is the sibling
# the check read, whole, under its own length and tag, never the bytes
# that took its name.  Deterministic: a test module's handler
# (t/modules/mod_adf_rename.c), which runs after the swap and before the
# module's own handler, does the rename and declines.  The module sends
# from the descriptor its check opened: httpd's default handler reopens
# by name and would send the newcomer's bytes under the checked one's
# Content-Length and ETag.  (A Lua
# LuaMapHandler cannot stand in: a request it maps has a handler of its
# own, and siblings are only ever served by the default one's path.)
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use ADFTest;

plan tests => 8, need_module('mod_mime.c');

my $page = join '', map { "<p>Version one, line $_ of the page.</p>\n" } 1 .. 800;
my $next = join '', map { "<li>Something else entirely, item $_</li>\n" } 1 .. 300;
my $dir = scratch_dir($page);
my $doc = "$dir/htdocs";
# the children (nobody when root) rename in it
chmod 0777, $doc;
utime old_time(), old_time(), "$doc/page.html";
my $sibling = make_sibling("$doc/page.html", 'gzip');
my $sibling_bytes = slurp($sibling);

# Before each request: the bytes that will take the sibling's name.
sub arm {
    compress_to('gzip', $next, "$doc/next.gz");
    chmod 0644, "$doc/next.gz";
}

# the test module, built with httpd's apxs
system("cp t/modules/mod_adf_rename.c '$dir' && cd '$dir' "
       . "&& apxs -c mod_adf_rename.c >build.log 2>&1") == 0
    or die "apxs -c t/modules/mod_adf_rename.c: " . slurp("$dir/build.log");
my $url = scratch_server($dir, 'event', <<"CONF",
LoadModule adf_rename_module "$dir/.libs/mod_adf_rename.so"
AdaptiveDeflate On
AdaptiveDeflateEncodings gzip
AdaptiveDeflateLoadSource none
AdaptiveDeflatePrecompressed On
CONF
    ADF_TEST_RENAME_FROM => "$doc/next.gz",
    ADF_TEST_RENAME_TO => "$doc/page.html.gz");
my $ua = Apache::TestRequest::user_agent();

arm();
my $r = $ua->get("$url/page.html", 'Accept-Encoding' => 'gzip');
holds(!-e "$doc/next.gz" && slurp($sibling) ne $sibling_bytes,
      'the test module renamed other bytes over the sibling mid-request');
ok t_cmp($r->code, 200, 'served');
ok t_cmp($r->header('Content-Encoding') // '', 'gzip', 'the sibling went out');
ok t_cmp(length $r->content, length $sibling_bytes,
         'whole, at the length its check read');
holds($r->content eq $sibling_bytes && (gunzip_ok($r->content) // '') eq $page,
      'the checked sibling\'s bytes: they decode to the page');
holds(($r->header('ETag') // '') =~ /-ad-gzip-pre\./,
      'under the sibling\'s own tag');

# The newcomer carries no mark for page.html: from now on the page is
# compressed on the fly, and still the page.
$r = $ua->get("$url/page.html", 'Accept-Encoding' => 'gzip');
holds(($r->header('ETag') // '') !~ /-pre\./
      && (gunzip_ok($r->content) // '') eq $page,
      'an unmarked newcomer is not served: the page, compressed on the fly');
holds(error_log_of($dir) !~ /\[(?:crit|alert|emerg)\]|segfault|exit signal/,
      'no child crashed');

stop_scratch_server($dir);

sub error_log_of { slurp("$_[0]/error_log") }
