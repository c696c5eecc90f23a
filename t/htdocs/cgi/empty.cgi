#!/usr/bin/perl
# Headers and no body, as a CGI that has nothing to say (a 200 for a
# probe, an empty fragment): it must go as it is, not as an empty gzip.
# ?cl0 says so with Content-Length: 0.
my $cl = ($ENV{QUERY_STRING} || '') eq 'cl0' ? "Content-Length: 0\r\n" : '';
print "Content-Type: text/html\r\n$cl\r\n";
