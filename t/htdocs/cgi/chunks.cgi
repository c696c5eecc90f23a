#!/usr/bin/perl
# A body of unknown length, written in many small pieces.
$| = 1;
print "Content-Type: text/plain\r\n\r\n";
for my $i (1 .. 2000) {
    print "line $i of a streamed body\n";
}
