#!/usr/bin/perl
# A header over 8k.
print "Content-Type: text/plain\n";
print "X-Long: ", "a" x 9000, "\n\nbody\n";
