#!/usr/bin/perl
# A script that compresses its own body and says so: the module must not
# encode it again.
use IO::Compress::Gzip qw(gzip);
my $plain = "line of an already compressed response\n" x 200;
my $z;
gzip(\$plain => \$z) or die;
binmode STDOUT;
print "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n\r\n", $z;
