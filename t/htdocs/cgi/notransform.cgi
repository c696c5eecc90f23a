#!/usr/bin/perl
print "Content-Type: text/plain\r\nCache-Control: public, no-transform\r\n\r\n";
print "no-transform " x 100, "\n";
