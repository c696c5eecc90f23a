#!/usr/bin/perl
# A catalogue page made per request from the template that
# t/htdocs/dict/site.dict was made of: the same for the same query.
use strict;
my ($q) = ($ENV{QUERY_STRING} // '') =~ /(?:^|&)a=(\w+)/;
$q //= '';
print "Content-Type: text/html; charset=utf-8\r\n\r\n";
open my $d, '<', "$ENV{DOCUMENT_ROOT}/dict/site.dict" or die;
my $t = do { local $/; <$d> };
my ($head, $item, $foot) = $t =~ m{^(.*?<main class="content">\n)(  <article.*?</article>\n).*?(</main>.*)$}s;
print $head;
for my $i (1 .. 40) {
    (my $x = $item) =~ s/Product name/Product $i ($q)/;
    $x =~ s/EUR 0\.00/sprintf('EUR %d.%02d', $i * 7 % 90, $i * 13 % 100)/e;
    print $x;
}
print $foot;
