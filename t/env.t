# no-gzip and no-adaptive-deflate are read where the response is decided,
# as mod_deflate reads no-gzip: one a handler sets (here a Lua handler's
# r.subprocess_env, as PHP's apache_setenv would) turns compression off,
# with stock mod_deflate loaded or not; the no-gzip this module sets for
# mod_deflate does not, and the operator's (SetEnvIf) still does.  Each
# response decodes to the handler's page, coded once at most.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use ADFTest;

my @cases = (['',        'gzip', 'nothing set: gzip'],
             ['?nogzip', '',     "the handler's no-gzip"],
             ['?noadf',  '',     "the handler's no-adaptive-deflate"],
             ['',        '',     "the operator's no-gzip (SetEnvIf)",
              'User-Agent' => 'NoGzipBot']);

plan tests => 2 * @cases * 2, need_module('mod_mime.c');

my $page = join '', map { "<p>line $_ of a page a handler wrote</p>\n" } 1 .. 200;
my $dir = scratch_dir($page);
mkdir "$dir/htdocs/lua";
chmod 0755, "$dir/htdocs/lua";
spew("$dir/htdocs/lua/page.lua", <<'LUA');
function handle(r)
    r.content_type = "text/html"
    local a = r.args or ""
    if a == "nogzip" then r.subprocess_env["no-gzip"] = "1" end
    if a == "noadf" then r.subprocess_env["no-adaptive-deflate"] = "1" end
    for i = 1, 200 do
        r:puts("<p>line " .. i .. " of a page a handler wrote</p>\n")
    end
    return apache2.OK
end
LUA
chmod 0644, "$dir/htdocs/lua/page.lua";

my $ua = Apache::TestRequest::user_agent();
for my $stock (0, 1) {
    my $with = $stock ? 'mod_deflate loaded' : 'alone';
    my $conf = <<"CONF";
LoadModule lua_module \@MODDIR\@/mod_lua.so
LoadModule setenvif_module \@MODDIR\@/mod_setenvif.so
AdaptiveDeflate On
AdaptiveDeflateLoadSource none
SetEnvIf User-Agent "^NoGzipBot" no-gzip
<Directory "$dir/htdocs/lua">
    SetHandler lua-script
</Directory>
CONF
    # stock mod_deflate on every response: it must step aside
    $conf .= "LoadModule deflate_module \@MODDIR\@/mod_deflate.so\n"
           . "SetOutputFilter DEFLATE\n" if $stock;
    my $url = scratch_server($dir, 'event', $conf);
    for my $c (@cases) {
        my ($q, $coding, $what, @h) = @$c;
        my $r = $ua->get("$url/lua/page.lua$q", 'Accept-Encoding' => 'gzip',
                         @h);
        ok t_cmp($r->header('Content-Encoding') // '', $coding,
                 "$with, $what: Content-Encoding");
        ok t_cmp($coding ? gunzip_ok($r->content) : $r->content, $page,
                 "$with, $what: the page");
    }
    stop_scratch_server($dir);
}
