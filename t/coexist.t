# Installed next to Debian's stock mod_deflate (and mod_brotli): where
# AdaptiveDeflate is On this module compresses and the stock modules step
# aside, whatever inserted their filters and in whichever order; where it
# is Off they work as before; never two codings.  DeflateFilterNote and
# BrotliFilterNote (dr=, brr= in the log) show who compressed.
# Configuration: t/conf/features/coexist.conf.in (the notes: extra.conf.in).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use File::Path qw(make_path);
use ADFTest;

# Directories of t/conf/features/coexist.conf.in: how the stock filters get in.
my @on = ('',           # Debian's deflate.conf: AddOutputFilterByType
          '/set',       # SetOutputFilter BROTLI_COMPRESS;DEFLATE
          '/before',    # ADAPTIVE_DEFLATE by hand, before the stock ones
          '/after',     # ... and after them
          '/chain',     # mod_filter: FilterProvider + FilterChain
          '/bytype',    # both by type (AddOutputFilterByType)
          '/ext');      # AddOutputFilter by extension (mod_mime)
my @ae = ('gzip', 'br', 'gzip, br');

plan tests => @on * @ae * 7 + 7 + 3 * 4 + 1 + 10 + 2 * 4 + 2;

idle();

my $root = docroot();
my $page = slurp("$root/index.html");
my $css = "body { color: #333; margin: 0 auto; }\n" x 40;
make_path(map { "$root/coexist$_" } @on, qw(/off/brotli /off/hand));
for my $d (@on, qw(/off /off/brotli /off/hand)) {
    spew("$root/coexist$d/page.html", $page);
}
spew("$root/coexist/style.css", $css);
spew("$root/coexist/off/style.css", $css);

# ---- On: this module's coding, level and notes; the stock modules' notes
# stay empty; one Content-Encoding, one Vary.
for my $d (@on) {
    for my $ae (@ae) {
        my ($r, $n) = fetch_noted("/coexist$d/page.html", $ae);
        my $ce = join(',', $r->header('Content-Encoding'));
        # the server prefers gzip on ties in this suite; a build without
        # brotli sends br-only clients the body as it is
        my $want = $ae eq 'br' ? if_built('br', '') : 'gzip';
        my $t = "On$d, AE $ae";
        ok t_cmp($ce, $want, "$t: one coding, ours");
        ok t_cmp(decode_body($r), $page, "$t: decodes");
        ok t_cmp("$n->{coding} $n->{reason}",
                 $want ? "$want max" : 'identity not-accepted', "$t: our notes");
        ok t_cmp($n->{dr}, '-', "$t: mod_deflate stepped aside");
        ok t_cmp($n->{brr}, '-', "$t: mod_brotli stepped aside");
        ok t_cmp(vary_count($r), 1, "$t: one Vary");
        if ($want eq 'gzip') {
            # zlib's XFL byte: 2 for level 9 (ours, idle), 0 for mod_deflate's 6
            ok t_cmp(gzip_xfl($r->content), 2, "$t: our level (9)");
        }
        elsif ($want eq 'br') {
            ok t_cmp($n->{level}, 6, "$t: our quality (6)");
        }
        else {
            ok t_cmp($n->{level}, 0, "$t: not compressed");
        }
    }
}

# A type this module does not compress (text/css is not in the suite's
# AdaptiveDeflateTypes): where On, the stock modules step aside for it too.
my ($r, $n) = fetch_noted('/coexist/style.css', 'gzip, br');
uncoded($r, $n, 200, 'type', 'On, type not ours: identity');
ok t_cmp($r->content, $css, 'On, type not ours: intact');
ok t_cmp("$n->{coding} $n->{reason}", 'identity type', 'our notes say why');
ok t_cmp("$n->{dr} $n->{brr}", '- -', 'the stock modules did nothing');
ok t_cmp(vary_count($r), 0, 'no Vary');

# Above the CPU limit: nothing is compressed, mod_deflate's fixed level
# does not step in.
set_load(99);
wait_for(sub { (fetch_noted('/coexist/page.html', 'gzip'))[1]{reason} eq 'cpu-limit' },
         10);
for my $d ('', '/set', '/chain') {
    ($r, $n) = fetch_noted("/coexist$d/page.html", 'gzip, br');
    uncoded($r, $n, 200, 'cpu-limit', "On$d, limited: identity");
    ok t_cmp("$n->{reason} $n->{dr} $n->{brr}", 'cpu-limit - -',
             "On$d, limited: our reason, no stock compression");
}
ok t_cmp($r->content, $page, 'limited: intact');
idle();

# ---- Off: mod_deflate (by type) and mod_brotli (SetOutputFilter) as
# configured, with their notes; this module's notes stay empty.
($r, $n) = fetch_noted('/coexist/off/page.html', 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip', 'Off: mod_deflate compresses');
ok t_cmp(gzip_xfl($r->content), 0, 'at its own level (6)');
ok t_cmp(decode_body($r), $page);
ok t_cmp($n->{dr}, qr/^\d+$/, 'DeflateFilterNote logs its ratio');
ok t_cmp($n->{coding}, '-', 'this module did nothing');
($r, $n) = fetch_noted('/coexist/off/style.css', 'gzip');
ok t_cmp($r->header('Content-Encoding'), 'gzip',
         'Off: mod_deflate compresses the types it is given');
ok t_cmp(decode_body($r), $css);
($r, $n) = fetch_noted('/coexist/off/brotli/page.html', 'br, gzip');
ok t_cmp(join(',', $r->header('Content-Encoding')), 'br',
         'Off: mod_brotli compresses, once');
ok t_cmp(decode_body($r), $page);
ok t_cmp("$n->{brr} $n->{dr} $n->{coding}", qr/^\d+ - -$/,
         'BrotliFilterNote logs its ratio');

# ---- Off, ADAPTIVE_DEFLATE added by hand after Debian's by-type DEFLATE:
# the first compressor in the chain that takes the response wins (here
# mod_deflate for gzip, this module for br, which mod_deflate does not
# offer); the other sees the Content-Encoding and steps aside.
for my $ae (qw(gzip br)) {
    my $want = $ae eq 'br' ? if_built('br', '') : $ae;
    ($r, $n) = fetch_noted('/coexist/off/hand/page.html', $ae);
    ok t_cmp(join(',', $r->header('Content-Encoding')), $want,
             "Off + by hand, AE $ae: one coding");
    ok t_cmp(decode_body($r), $page);
    ok t_cmp(vary_count($r), 1, 'one Vary');
    if ($ae eq 'gzip') {
        ok t_cmp("$n->{coding} $n->{reason} $n->{dr}", qr/^identity encoded \d+$/,
                 'mod_deflate first: it compressed, this module saw "encoded"');
    }
    else {
        ok t_cmp("$n->{coding} $n->{dr}", ($want || 'identity') . ' -',
                 'br: this module (a build without brotli: nobody)');
    }
}

# One notice at start-up names the rule.
my $log = slurp(serverroot() . '/logs/error_log');
ok t_cmp($log, qr/ADF00011.*mod_deflate\.c is loaded too: where AdaptiveDeflate is On/,
         'start-up notice for mod_deflate');
ok t_cmp($log, qr/ADF00011.*mod_brotli\.c is loaded too/,
         'start-up notice for mod_brotli');
