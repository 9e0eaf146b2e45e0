#!/usr/bin/perl
# 5 MB: 5120 lines of 1024 bytes (1023 characters and a newline).
$| = 0;
print "Content-Type: text/plain\n\n";
for my $i (1 .. 5120) {
    printf "%08d%s\n", $i, 'x' x 1015;
}
