#!/usr/bin/perl
# Sends a first part, then stalls: the first part must reach the client
# compressed before the second is written.
$| = 1;
my $type = ($ENV{QUERY_STRING} || '') eq 'sse' ? 'text/event-stream'
                                                : 'text/plain';
print "Content-Type: $type\r\n\r\n";
print "data: first part " . ("x" x 200) . "\n\n";
sleep 3;
print "data: second part " . ("y" x 200) . "\n\n";
