#!/usr/bin/perl
# A script that compresses its own body and makes its own validator, with
# a "-gzip" suffix as mod_deflate does: it answers 304 to its own tag.
use IO::Compress::Gzip qw(gzip);
my $inm = $ENV{HTTP_IF_NONE_MATCH} // '';
if ($inm eq '"v1-gzip"') {
    print "Status: 304 Not Modified\r\nETag: \"v1-gzip\"\r\n\r\n";
    exit 0;
}
my $plain = "a self-compressed response\n" x 200;
my $z;
gzip(\$plain => \$z) or die;
binmode STDOUT;
print "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n",
      "ETag: \"v1-gzip\"\r\nVary: Accept-Encoding\r\n",
      "X-Seen-If-None-Match: $inm\r\n\r\n", $z;
