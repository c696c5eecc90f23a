#!/usr/bin/perl
# Headers and no body, as a CGI that has nothing to say (a 200 for a
# probe, an empty fragment): it must go as it is, not as an empty gzip.
print "Content-Type: text/html\r\n\r\n";
