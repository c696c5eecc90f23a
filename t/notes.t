# The request notes are written only where something reads them
# (AdaptiveDeflateNotes: written, they cost every response instructions
# that bench/instructions counts): where the configuration names one (a
# LogFormat), where a scripting module is loaded (a Lua log hook reads
# them without naming them in the configuration), always with On,
# never with Off; a graceful restart applies a changed setting; the
# directive is refused outside the server config and with a bad value.
# Whatever the notes, the response is the same compressed one.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Temp qw(tempdir);
use ADFTest;

plan tests => 15, need_module('mod_mime.c');

my $page = ("<p>Notes only where something reads them.</p>\n" x 300);
my $dir = scratch_dir($page);
for my $f ("$dir/notes", "$dir/lua-notes") {
    spew($f, '');
    chmod 0666, $f;
}
spew("$dir/notes.lua", <<"LUA");
function logger(r)
    local f = io.open("$dir/lua-notes", "a")
    f:write((r.notes["adaptive" .. "_deflate_coding"] or "-") .. "\\n")
    f:close()
    return apache2.DECLINED
end
LUA
chmod 0644, "$dir/notes.lua";

my $logged = <<"CONF";
LogFormat "%U %{adaptive_deflate_coding}n %{adaptive_deflate_reason}n" n
CustomLog "$dir/notes" n
CONF
# Lua's own log hook names no note in the configuration
my $lua = <<"CONF";
LoadModule lua_module \@MODDIR\@/mod_lua.so
LuaHookLog "$dir/notes.lua" logger
CONF

my $ua = Apache::TestRequest::user_agent();

# One GET: whether it decoded to the page, and the last lines the two
# logs got for it.
sub one_get {
    my ($url) = @_;
    my $r = $ua->get("$url/page.html", 'Accept-Encoding' => 'gzip');
    my $ok = ($r->header('Content-Encoding') // '') eq 'gzip'
             && gunzip_ok($r->content) eq $page;
    my @lines;
    for my $f ("$dir/notes", "$dir/lua-notes") {
        # the log line is written after the response went out
        wait_for(sub { slurp($f) =~ /\n\z/ }, 5);
        my @l = split /\n/, slurp($f);
        push @lines, $l[-1] // '';
        spew($f, '');
    }
    return ($ok, @lines);
}

sub with_conf {
    my ($conf) = @_;
    return scratch_server($dir, 'event', $conf . "AdaptiveDeflate On\n"
                                          . "AdaptiveDeflateLoadSource none\n");
}

# Auto, a LogFormat names them: written.
my $url = with_conf($logged);
my ($ok, $line) = one_get($url);
ok t_cmp($ok, 1, 'Auto, named by a LogFormat: the response is gzip');
ok t_cmp($line, '/page.html gzip max', 'Auto, named by a LogFormat: the notes are logged');
stop_scratch_server($dir);

# Off: the same LogFormat finds none, the response is the same.
$url = with_conf($logged . "AdaptiveDeflateNotes Off\n");
($ok, $line) = one_get($url);
ok t_cmp($ok, 1, 'Off: the response is gzip');
ok t_cmp($line, '/page.html - -', 'Off: no notes');

# A graceful restart into Auto writes them again.
spew("$dir/httpd.conf", slurp("$dir/httpd.conf") =~ s/AdaptiveDeflateNotes Off\n//r);
my $resumed = () = slurp("$dir/error_log") =~ /resuming normal operations/g;
system(ADFTest::httpd_bin(), '-d', $dir, '-f', "$dir/httpd.conf", '-k', 'graceful') == 0
    or die "graceful";
wait_for(sub { my $n = () = slurp("$dir/error_log") =~ /resuming normal operations/g;
               $n > $resumed }, 20) or die "no graceful restart";
# the old generation's children may answer a moment longer
wait_for(sub { (one_get($url))[1] eq '/page.html gzip max' }, 10);
($ok, $line) = one_get($url);
ok t_cmp($line, '/page.html gzip max', 'after a graceful restart into Auto: the notes are logged');
stop_scratch_server($dir);

# Auto, nothing names them, a scripting module is loaded: a Lua log hook
# reads them.
$url = with_conf($lua);
my (undef, $lua_line);
($ok, undef, $lua_line) = one_get($url);
ok t_cmp($ok, 1, 'Auto, mod_lua: the response is gzip');
ok t_cmp($lua_line, 'gzip', 'Auto, mod_lua loaded: a Lua log hook reads the coding note');
stop_scratch_server($dir);

# ... and Off there too: the hook finds none.
$url = with_conf($lua . "AdaptiveDeflateNotes Off\n");
($ok, undef, $lua_line) = one_get($url);
ok t_cmp($ok, 1, 'Off, mod_lua: the response is gzip');
ok t_cmp($lua_line, '-', 'Off, mod_lua: no notes for the Lua hook');
stop_scratch_server($dir);

# On with mod_lua and nothing naming them: written.
$url = with_conf($lua . "AdaptiveDeflateNotes On\n");
($ok, undef, $lua_line) = one_get($url);
ok t_cmp($lua_line, 'gzip', 'On: written');
stop_scratch_server($dir);

# The directive's context and values.
my $check = tempdir(CLEANUP => 1);
my ($rc, $out, $file, $line1) = config_check($check, <<"CONF");
<VirtualHost 127.0.0.1:1>
AdaptiveDeflateNotes On
</VirtualHost>
CONF
ok t_cmp($rc != 0 ? 1 : 0, 1, 'in a virtual host: refused at start-up');
ok t_cmp($out, qr/AdaptiveDeflateNotes cannot occur within <VirtualHost>/,
         'in a virtual host: the message names the directive');
ok t_cmp($out, qr/line @{[$line1 + 1]} of \Q$file\E/, '... and the file and line');
($rc, $out) = config_check($check, "AdaptiveDeflateNotes maybe\n");
ok t_cmp($rc != 0 ? 1 : 0, 1, 'a bad value: refused at start-up');
ok t_cmp($out, qr/AdaptiveDeflateNotes: 'maybe': Auto, On or Off/, 'a bad value: the message says what is allowed');
