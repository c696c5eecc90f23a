# Compressed bodies decompress byte-identical; headers of a compressed
# response; what must pass untouched, and why (the reason noted).
# Configuration: t/conf/features/basic.conf.in (and cgi.conf.in).
use strict;
use warnings FATAL => 'all';
use lib 't/lib';
use Apache::Test;
use Apache::TestUtil;
use ADFTest;

my $root = docroot();

# t/gen-corpus's files, and ADF_CORPUS's (corpus/extra, served as text).
my @corpus = qw(page.html big.html book.txt data.json style.css app.js
                urls.txt);
push @corpus, map { s{^\Q$root/corpus/\E}{}r } grep { -f }
                  sort glob("$root/corpus/extra/*");
plan tests => 8 * @corpus + 4 * 2 + 30 + 4;

for my $f (@corpus) {
    my $orig = slurp("$root/corpus/$f");
    for my $coding (qw(gzip br)) {
        my $want = if_built($coding, undef);    # not built: as it is
        my $res = fetch("/corpus/$f", 'Accept-Encoding' => $coding);
        ok t_cmp($res->header('Content-Encoding'), $want,
                 "$f: Content-Encoding " . ($want // 'none'));
        my $body = decode_body($res);
        ok defined $body && $body eq $orig;
        print "# $f $coding: ", length($orig), " -> ",
              length($res->content), " bytes\n";
        ok t_cmp(vary_count($res), 1, "$f $coding: Vary once");
        my $cl = $res->header('Content-Length');
        ok !defined $cl || $cl == length($res->content);
    }
}

# 0 and 1 byte bodies, where MinLength is 0: one byte is compressed as
# asked; an empty body has nothing to compress, and a coding would only
# add its header and trailer.
for my $case ([ 'empty.html', '', undef ], [ 'one.html', 'x', 'gzip' ]) {
    my ($f, $want, $coding) = @$case;
    my ($res, $n) = fetch_noted("/min0/$f", 'gzip');
    ok t_cmp($res->code, 200, "$f: 200");
    ok t_cmp($res->header('Content-Encoding'), $coding,
             "$f: " . ($coding // 'not') . " compressed");
    ok t_cmp($coding ? $n->{coding} : "$n->{coding} $n->{reason}",
             $coding // 'identity min-length', "$f: noted");
    my $body = decode_body($res);
    ok defined $body && $body eq $want;
}

# A 10 MB body.
{
    my $orig = slurp("$root/big.txt");
    my $res = fetch('/big.txt', 'Accept-Encoding' => 'gzip');
    ok t_cmp($res->header('Content-Encoding'), 'gzip', '10 MB compressed');
    my $body = decode_body($res);
    ok defined $body && length($body) == length($orig) && $body eq $orig;
}

# A body of unknown length in many small pieces (CGI).
{
    my $want = join '', map { "line $_ of a streamed body\n" } 1 .. 2000;
    my $res = fetch('/cgi/chunks.cgi', 'Accept-Encoding' => 'gzip');
    ok t_cmp($res->header('Content-Encoding'), 'gzip', 'CGI compressed');
    my $body = decode_body($res);
    ok defined $body && $body eq $want;
    my $n = note_for(qr{^GET /cgi/chunks.cgi });
    ok t_cmp($n->{in}, length($want), 'note adaptive_deflate_in');
    ok t_cmp($n->{out}, length($res->content), 'note adaptive_deflate_out');
}

# No Accept-Encoding: identity, but Vary says it could differ.
{
    my ($res, $n) = fetch_noted('/corpus/book.txt', undef);
    uncoded($res, $n, 200, 'not-accepted', 'no Accept-Encoding');
    ok $res->content eq slurp("$root/corpus/book.txt");
    ok t_cmp(vary_count($res), 1, 'identity response carries Vary');
}

# A JPEG passes byte-identical, with no Vary (it is never compressed).
{
    my ($res, $n) = fetch_noted('/corpus/photo.jpeg', 'gzip, br');
    uncoded($res, $n, 200, 'type', 'a JPEG');
    ok $res->content eq slurp("$root/corpus/photo.jpeg");
    ok t_cmp(vary_count($res), 0, 'no Vary on a never-compressed type');
    ok t_cmp($res->header('Content-Length'), -s "$root/corpus/photo.jpeg");
}

# A type outside AdaptiveDeflateTypes (text/css here) is left alone.
{
    my ($res, $n) = fetch_noted('/style.css', 'gzip');
    uncoded($res, $n, 200, 'type', 'text/css');
}

# Under MinLength: untouched and no Vary.
{
    my ($res, $n) = fetch_noted('/one.html', 'gzip');
    uncoded($res, $n, 200, 'min-length', 'one byte, MinLength 100');
    ok t_cmp(vary_count($res), 0, 'no Vary below MinLength');
}

# AdaptiveDeflate Off in a directory.
{
    # (its filter is never inserted: no decision, no note)
    my ($res, $n) = fetch_noted('/plain/page.html', 'gzip');
    uncoded($res, $n, 200, '-', 'AdaptiveDeflate Off');
}

# Already encoded (mod_mime AddEncoding): no second gzip.
{
    my $res = fetch('/encoded/pre.html.gz', 'Accept-Encoding' => 'gzip');
    ok t_cmp($res->header('Content-Encoding'), 'gzip', 'encoded once');
    ok $res->content eq slurp("$root/encoded/pre.html.gz");
    my $n = note_for(qr{^GET /encoded/pre.html.gz });
    ok t_cmp($n->{reason}, 'encoded', 'reason encoded');
}

# Many tiny buckets and flushes (mod_bucketeer: ^B splits, ^F flushes).
{
    my $orig = substr(slurp("$root/corpus/book.txt"), 0, 150000);
    my $marked = '';
    for (my $i = 0; $i < length $orig; $i += 7) {
        $marked .= substr($orig, $i, 7) . ($i % 7000 == 0 ? "\x06" : "\x02");
    }
    $orig =~ s/[\x02\x06\x10]//g;
    mkdir "$root/bucketeer";
    spew("$root/bucketeer/split.txt", $marked);
    chmod 0644, "$root/bucketeer/split.txt";
    for my $coding (qw(gzip br)) {
        my $res = fetch('/bucketeer/split.txt', 'Accept-Encoding' => $coding);
        ok t_cmp($res->header('Content-Encoding'), if_built($coding, undef),
                 "tiny buckets $coding");
        my $body = decode_body($res);
        ok defined $body && $body eq $orig;
    }
}
