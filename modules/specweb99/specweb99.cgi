#!/usr/bin/perl

# specweb99.cgi: the SPECweb99 CGI dynamic GET as a real CGI program (run
# by mod_cgi). Same page as mod_specweb99's standard dynamic GET:
#
#   GET /cgi-bin/specweb99.cgi?/file_set/dirNNNNN/classX_Y
#
# answers the file ROOT/file_set/dirNNNNN/classX_Y in the wrapper
#
#   <html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title></head>\n
#   <body>\n<p>SERVER_SOFTWARE = S\n<p>REMOTE_ADDR = A\n<p>SCRIPT_NAME = N\n
#   <p>QUERY_STRING = Q\n<pre>\n  FILE BYTES  \n</pre>\n</body></html>\n
#
# ROOT is the environment variable SPECWEB99_ROOT (pass it with
# `cgi_pass_env SPECWEB99_ROOT;`), else the file "specweb99.root" next to
# this script (one line: the path), else DOCUMENT_ROOT.

use strict;
use warnings;

binmode(STDOUT);

sub fail
{
    my ($status, $msg) = @_;

    print "Status: $status\r\nContent-Type: text/plain\r\n\r\n$msg\n";
    exit 0;
}

my $root = $ENV{SPECWEB99_ROOT};
if (!defined $root || $root eq '') {
    my $f = ($ENV{SCRIPT_FILENAME} // '') =~ m{^(.*)/[^/]*$}
            ? "$1/specweb99.root" : 'specweb99.root';
    if (open(my $fh, '<', $f)) {
        $root = <$fh>;
        close $fh;
        chomp $root if defined $root;
    }
}
$root = $ENV{DOCUMENT_ROOT} if !defined $root || $root eq '';
fail('500 Internal Server Error', 'no root') if !defined $root;

my $q = $ENV{QUERY_STRING} // '';
fail('400 Bad Request', 'bad file name')
    if $q !~ m{^/[A-Za-z0-9_/.-]{1,511}$} || $q =~ /\.\./;

my $data;
{
    open(my $fh, '<:raw', "$root$q") or fail('404 Not Found', 'not found');
    local $/;
    $data = <$fh> // '';
    close $fh;
}

my $page = "<html>\n<head><title>SPECweb99 Dynamic GET & POST Test</title>"
    . "</head>\n<body>\n"
    . '<p>SERVER_SOFTWARE = ' . ($ENV{SERVER_SOFTWARE} // '') . "\n"
    . '<p>REMOTE_ADDR = ' . ($ENV{REMOTE_ADDR} // '') . "\n"
    . '<p>SCRIPT_NAME = ' . ($ENV{SCRIPT_NAME} // '') . "\n"
    . "<p>QUERY_STRING = $q\n<pre>\n"
    . $data
    . "\n</pre>\n</body></html>\n";

print "Content-Type: text/html\r\n\r\n" . $page;
