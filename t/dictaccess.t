# A dictionary is used only for a client that may read what it stands
# for: a version the cache kept (AdaptiveDeflateDictionaryVersions) only
# for a request whose client could fetch the file it was kept from, and
# a configured one (AdaptiveDeflateDictionary) only where its URL may be
# fetched.  Otherwise naming a dictionary's SHA-256 would tell whether a
# guess about a file one may not read is exactly right: the answer must
# be the same for a right guess and a wrong one.  Four layouts: files
# of one directory under a <Files> rule, or under a rule on the URL in
# one section, two tenants' virtual hosts of one layout, per-user
# directories of several owners.
# Configuration: t/conf/features/dictaccess.conf.in.
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestRequest ();
use Apache::TestUtil;
use File::Path ();
use Digest::MD5 qw(md5_hex);
use MIME::Base64 qw(encode_base64);
use ADFTest;

plan tests => 74;

my $z = built('zstd');
my $root = docroot();
my $ae = 'gzip, deflate, br, zstd, dcz';
idle();

my $pw = serverroot() . '/logs/dictaccess.htpasswd';
unlink $pw;
for my $u (qw(alice u1001 u1002 u1003)) {
    system('htpasswd', -e $pw ? '-bm' : '-cbm', $pw, $u, "pw-$u") == 0
        or die 'htpasswd';
}
chmod 0644, $pw;
sub auth { ('Authorization' => 'Basic ' . encode_base64("$_[0]:pw-$_[0]", '')) }

# Text of $n lines of words in a pseudo-random order from $seed: a few
# kilobytes that brotli makes about a fifth of.
sub text {
    my ($seed, $n) = @_;
    my @w = qw(revenue quarter margin forecast region total budget cost
               growth target account invoice balance payroll audit);
    return join '', map {
        join(' ', map { $seed = ($seed * 1103515245 + 12345) % 2147483648;
                        $w[($seed >> 16) % @w] } 1 .. 12) . "\n"
    } 1 .. $n;
}

# $data at $file, dated in the past, put in place by a rename (a deploy).
sub deploy {
    my ($file, $data) = @_;
    (my $dir = $file) =~ s{/[^/]+$}{};
    File::Path::make_path($dir);
    chmod 0755, $dir;
    spew("$file.tmp", $data);
    chmod 0644, "$file.tmp";
    utime time - 100, time - 100, "$file.tmp";
    rename "$file.tmp", $file or die "rename $file: $!";
}

# Ask for $path (with @hdrs) until its response says its version is kept
# as a dictionary (Use-As-Dictionary): whether it did within 60 s (5 s in
# a build without zstd, which never keeps one: the cache worker stores a
# version within a second of its first response on an idle server).  Once
# a second, as wait_hit asks: faster, prefork's children (40 connections
# each) would end so often that the worker, in one of them, stayed away.
sub kept_for {
    my ($path, @hdrs) = @_;
    return wait_for(sub {
        (fetch($path, 'Accept-Encoding' => $ae, @hdrs)
             ->header('Use-As-Dictionary') // '') ne '';
    }, $z ? 60 : 5, 1);
}

# A response's Cache-Control, or '-'.
sub cache_control { $_[0]->header('Cache-Control') // '-' }

# What a response tells its reader: status, coding, length, tag.
sub seen {
    my ($r) = @_;
    return join ' ', $r->code, $r->header('Content-Encoding') // '-',
                     length($r->content), $r->header('ETag') // '-';
}

# The answers for $path naming $right (the exact bytes of a file the
# client may not read) and a wrong guess: neither is dcz, and they are
# the same (GET and HEAD).  A wrong guess is asked before the right one
# and after it: the cache worker may store the file's entry in between
# (the answer then goes from on-the-fly to stored), and the right guess's
# must be one of the two.
sub same_for_any_guess {
    my ($what, $path, $right, @hdrs) = @_;
    my @ad = map { ('Available-Dictionary' => available_dictionary($_)) }
             $right, $right . "\n";
    for my $m (['GET', \&fetch], ['HEAD', \&head]) {
        my ($name, $ask) = @$m;
        my $w1 = $ask->($path, 'Accept-Encoding' => $ae, @ad[2, 3], @hdrs);
        my $r = $ask->($path, 'Accept-Encoding' => $ae, @ad[0, 1], @hdrs);
        my $w2 = $ask->($path, 'Accept-Encoding' => $ae, @ad[2, 3], @hdrs);
        if ($name eq 'GET') {
            ok t_cmp(($r->header('Content-Encoding') // '-') ne 'dcz' ? 1 : 0,
                     1, "$what: the exact bytes named: not dcz");
        }
        ok t_cmp(seen($r), seen($r) eq seen($w1) ? seen($w1) : seen($w2),
                 $name eq 'GET' ? "$what: ... the same answer as a wrong guess"
                                : "$what: ... HEAD too");
    }
}

# A response decoded as its coding says (dcz against $dict): it must be
# dcz (where the build has zstd) and decode to $want.
sub answered_against {
    my ($what, $r, $dict, $want) = @_;
    my $ce = $r->header('Content-Encoding') // '-';
    my $body = $z ? undcz($r->content, $dict) : decode_body($r);
    ok t_cmp(join(' ', $ce, ($body // '') eq $want ? 'decodes'
                                                   : 'does not decode'),
             ($z ? 'dcz' : $ce) . ' decodes', $what);
}

# $hers (alice's only) and $theirs (anyone's), files of one pattern in
# the directory of URL $url: alice's version, once kept, must not answer
# an anonymous request for the other naming its hash.  Their bytes.
sub alices_beside_anyones {
    my ($why, $url, $hers, $theirs) = @_;
    my %data = map { $_ => text(unpack('%32C*', $_), 300) } $hers, $theirs;
    deploy("$root$url/$_", $data{$_}) for $hers, $theirs;
    ok t_cmp(fetch("$url/$hers")->code, 401, "$hers is for alice only, $why");
    ok t_cmp(kept_for("$url/$hers", auth('alice')) ? 1 : 0, $z ? 1 : 0,
             '... alice got it, and it is kept as a dictionary');
    same_for_any_guess("an anonymous request for $theirs", "$url/$theirs",
                       $data{$hers});
    return @data{$hers, $theirs};
}

# ---- one directory, a <Files> rule ---------------------------------------------
my ($secret, $public) = alices_beside_anyones('by a <Files> rule',
    '/dictaccess/reports', 'report-2025.txt', 'report-2024.txt');
# alice may read it: she is answered against it
my $alice = fetch('/dictaccess/reports/report-2024.txt',
                  'Accept-Encoding' => $ae,
                  'Available-Dictionary' => available_dictionary($secret),
                  auth('alice'));
answered_against('... while alice, who may read it, gets dcz against it',
                 $alice, $secret, $public);
# Vary names no client: a shared cache must not give her answer to one
# the check refuses
ok t_cmp(cache_control($alice),
         $z ? 'max-age=60, private' : 'public, max-age=60, s-maxage=600',
         '... for her alone (Cache-Control, public no more)');

# ---- one section, a rule on the URL ----------------------------------------------
# A Require expr on the URL, in the section that lets anyone read the
# other: one merged configuration for both, which httpd does not check
# again for a subrequest of its own.
alices_beside_anyones('by a rule on its URL', '/dictaccess/expr',
                      'doc-1002.txt', 'doc-1001.txt');

# ---- rules on SetEnvIf's variables ---------------------------------------------
# httpd sets them for a request a client sent, never for a subrequest,
# which inherits the variables of its main request: the server's rule,
# the directory's, and a grant the main request's URL carries.
alices_beside_anyones("by the server's SetEnvIf", '/dictaccess/env',
                      'ledger-2025.txt', 'ledger-2024.txt');
alices_beside_anyones("by its directory's SetEnvIf", '/dictaccess/envdir',
                      'memo-2025.txt', 'memo-2024.txt');
alices_beside_anyones('while a SetEnvIf opens the other one',
                      '/dictaccess/grant', 'file-2025.txt', 'file-2024.txt');

# ---- rules a subrequest would not meet -------------------------------------------
# The check is the request a client would send for the version's URL:
# its own request line, no subrequest to mod_rewrite, and none of the
# variables an internal redirect on the way to this request set.
alices_beside_anyones('by a rule on the request line', '/dictaccess/line',
                      'page-2025.txt', 'page-2024.txt');
alices_beside_anyones('by a rewrite that skips subrequests', '/dictaccess/ns',
                      'note-2025.txt', 'note-2024.txt');
{
    my %data = map { $_ => text(unpack('%32C*', $_), 300) }
               'sheet-2025.txt', 'sheet-2024.txt';
    deploy("$root/dictaccess/redir/$_", $data{$_}) for keys %data;
    ok t_cmp(join(' ', fetch('/dictaccess/redir/sheet-2024.txt')->code,
                       fetch('/dictaccess/redir/view-2025')->code),
             '403 401', 'sheets only through their views, 2025 alice\'s');
    ok t_cmp(kept_for('/dictaccess/redir/view-2025', auth('alice')) ? 1 : 0,
             $z ? 1 : 0, '... alice got hers, and it is kept');
    same_for_any_guess('an anonymous view of 2024, through the redirect',
                       '/dictaccess/redir/view-2024', $data{'sheet-2025.txt'});
}

# ---- Digest authentication ------------------------------------------------------
# Its check of the version finds the request's parsed credentials through
# the request the client sent; alice authenticates by Digest (LWP answers
# the challenge with the username and password Apache::TestRequest has).
{
    my $realm = 'dictaccess-digest';
    my $hd = serverroot() . '/logs/dictaccess.htdigest';
    spew($hd, join '', map { "$_:$realm:" . md5_hex("$_:$realm:pw-$_") . "\n" }
                       qw(alice bob));
    chmod 0644, $hd;
    my %data = map { $_ => text(unpack('%32C*', $_), 300) }
               'memo-2025.txt', 'memo-2024.txt';
    deploy("$root/dictaccess/digest/$_", $data{$_}) for keys %data;
    ok t_cmp(fetch('/dictaccess/digest/memo-2025.txt')->code, 401,
             'memo-2025.txt is for alice only, by Digest authentication');
    ok t_cmp(kept_for('/dictaccess/digest/memo-2025.txt',
                      username => 'alice', password => 'pw-alice') ? 1 : 0,
             $z ? 1 : 0, '... alice got it, and it is kept as a dictionary');
    same_for_any_guess('an anonymous request for memo-2024.txt',
                       '/dictaccess/digest/memo-2024.txt',
                       $data{'memo-2025.txt'});
}

# ---- two tenants, one layout -------------------------------------------------------
# tenants/1001 is alice's site, tenants/1002 anyone's; each has /app.js.
my $app1 = text(1001, 300);
my $app2 = text(1002, 300);
deploy("$root/tenants/1001/htdocs/app.js", $app1);
deploy("$root/tenants/1002/htdocs/app.js", $app2);
Apache::TestRequest::module('adf_tenant1001');
ok t_cmp(kept_for('/app.js', auth('alice')) ? 1 : 0, $z ? 1 : 0,
         "tenant 1001's app.js, alice's, is kept");
Apache::TestRequest::module('adf_tenant1002');
same_for_any_guess("tenant 1002's app.js naming 1001's", '/app.js', $app1);
same_for_any_guess("... and asked by alice", '/app.js', $app1, auth('alice'));

# ---- a configured dictionary behind authentication ----------------------------
# In tenant 1001's host, /dictionaries/site.dict is alice's; /dyn/ anyone's.
Apache::TestRequest::module('adf_tenant1001');
my $dict = slurp("$root/dict/site.dict");
my $page = slurp("$root/index.html") x 4;
deploy("$root/tenants/1001/htdocs/dyn/page.html", $page);
# (its Location's rule answers first, whether this build serves it or not)
ok t_cmp(fetch('/dictionaries/site.dict')->code, 401,
         'a configured dictionary for alice only');
my $r = fetch('/dyn/page.html', 'Accept-Encoding' => $ae);
ok t_cmp($r->header('Link') // '-', '-',
         '... is not linked for a client who may not fetch it');
same_for_any_guess('... nor used for one', '/dyn/page.html', $dict);
$r = fetch('/dyn/page.html', 'Accept-Encoding' => $ae, auth('alice'));
ok t_cmp($r->header('Link') // '-',
         $z ? '</dictionaries/site.dict>; rel="compression-dictionary", '
              . '</dictionaries/line.dict>; rel="compression-dictionary"' : '-',
         '... while alice is told of it (and of the one below)');
$r = fetch('/dyn/page.html', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => available_dictionary($dict),
           auth('alice'));
answered_against('... and answered against it', $r, $dict, $page);
ok t_cmp(cache_control($r), $z ? 'private' : '-', '... for her alone');

# ... and one behind a rule on its request line
my $lpage = slurp("$root/index.html") x 5;
deploy("$root/tenants/1001/htdocs/dynline/page.html", $lpage);
ok t_cmp(fetch('/dictionaries/line.dict')->code, 401,
         'a configured dictionary for alice only, by its request line');
$r = fetch('/dynline/page.html', 'Accept-Encoding' => $ae);
ok t_cmp($r->header('Link') // '-', '-',
         '... is not linked for a client who may not fetch it');
same_for_any_guess('... nor used for one', '/dynline/page.html', $dict);

# ---- per-user directories -----------------------------------------------------------
# users/N/settings.json is user uN's alone.
Apache::TestRequest::module('default');
my %set = map { $_ => text($_, 200) } 1001 .. 1003;
deploy("$root/dictaccess/users/$_/settings.json", $set{$_}) for 1001 .. 1003;
ok t_cmp(kept_for('/dictaccess/users/1001/settings.json', auth('u1001')) ? 1 : 0,
         $z ? 1 : 0, "u1001's settings are kept");
same_for_any_guess("u1002's own settings naming u1001's",
                   '/dictaccess/users/1002/settings.json', $set{1001},
                   auth('u1002'));
# u1001's next version goes out against the one u1001 holds
(my $next = $set{1001}) =~ s/^(\w+)/updated/mg;
deploy("$root/dictaccess/users/1001/settings.json", $next);
$r = fetch('/dictaccess/users/1001/settings.json', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => available_dictionary($set{1001}),
           auth('u1001'));
answered_against("... and u1001's next version goes out against it", $r,
                 $set{1001}, $next);
ok t_cmp(cache_control($r), '-',
         "... for any cache: its own file's earlier version");
# Its revalidation is checked once: the subrequest that asks whether
# u1001 may read the version is no request that names a dictionary.
my $recursed = log_count(qr/AH00125/);
$r = fetch('/dictaccess/users/1001/settings.json', 'Accept-Encoding' => $ae,
           'Available-Dictionary' => available_dictionary($set{1001}),
           'If-None-Match' => $r->header('ETag') // '"none"', auth('u1001'));
ok t_cmp(join(' ', $r->code, log_count(qr/AH00125/) - $recursed),
         ($z ? 304 : $r->code) . ' 0', '... and revalidates, checked once');
