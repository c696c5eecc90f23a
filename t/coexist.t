# Installed next to Debian's stock mod_deflate (and mod_brotli): where
# AdaptiveDeflate is On this module compresses and the stock modules step
# aside, whatever the filter order; where it is Off they work as before;
# never two codings.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Path qw(make_path);
use ADFTest;

plan tests => 3 * 3 * 5 + 7 + 2;

idle();

my $root = docroot();
my $page = slurp("$root/index.html");
make_path(map { "$root/coexist/$_" } qw(set chain off/brotli));
for my $d ('', qw(/set /chain /off /off/brotli)) {
    spew("$root/coexist$d/page.html", $page);
}

# zlib's XFL byte: 2 for level 9 (this module, idle), 0 for level 6
# (mod_deflate's default).
for my $d ('', '/set', '/chain') {
    for my $ae ('gzip', 'br', 'gzip, br') {
        (my $q = $ae) =~ s/\W//g;
        my $r = fetch("/coexist$d/page.html?$q", 'Accept-Encoding' => $ae);
        my $n = note_for(qr{^GET /coexist\Q$d\E/page.html\?$q });
        my @ce = $r->header('Content-Encoding');
        # the server prefers gzip on ties in this suite; a build without
        # brotli sends br-only clients the body as it is
        my $want = $ae eq 'br' ? if_built('br', '') : 'gzip';
        ok t_cmp(join(',', @ce), $want, "On$d, AE $ae: one coding, ours");
        ok t_cmp(decode_body($r), $page, "On$d, AE $ae: decodes");
        ok t_cmp($n->{coding}, $want || 'identity', "On$d, AE $ae: our notes");
        ok t_cmp($n->{dr}, '-', "On$d, AE $ae: mod_deflate stepped aside");
        if ($want eq 'gzip') {
            ok t_cmp(gzip_xfl($r->content), 2, "On$d: our level (9)");
        }
        elsif ($want eq 'br') {
            ok t_cmp($n->{level}, qr/^\d+$/, "On$d: our quality");
        }
        else {
            ok t_cmp($n->{reason}, 'not-accepted', "On$d: no coding we have");
        }
    }
}

# Off: mod_deflate (by type) and mod_brotli (SetOutputFilter) as configured.
my $r = fetch('/coexist/off/page.html', 'Accept-Encoding' => 'gzip');
my $n = note_for(qr{^GET /coexist/off/page.html });
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'Off: mod_deflate compresses');
ok t_cmp(gzip_xfl($r->content), 0, 'at its own level (6)');
ok t_cmp(decode_body($r), $page);
ok t_cmp($n->{dr}, qr/^\d+$/, 'DeflateFilterNote logs its ratio');
ok t_cmp($n->{coding}, '-', 'this module did nothing');
$r = fetch('/coexist/off/brotli/page.html', 'Accept-Encoding' => 'br, gzip');
ok t_cmp(join(',', $r->header('Content-Encoding')), 'br',
         'Off: mod_brotli compresses, once');
ok t_cmp(decode_body($r), $page);

# One notice at start-up names the rule.
my $log = slurp(serverroot() . '/logs/error_log');
ok t_cmp($log, qr/ADF00011.*mod_deflate\.c is loaded too: where AdaptiveDeflate is On/,
         'start-up notice for mod_deflate');
ok t_cmp($log, qr/ADF00011.*mod_brotli\.c is loaded too/,
         'start-up notice for mod_brotli');
