#!/usr/bin/perl

# gannet -t on good and broken configurations, -v, -V, -h, bad options, and a
# server start with a broken configuration.

use strict;
use warnings;

use Test::More;
use GnTest;

my $t = GnTest->new;
my $dir = $t->testdir;

my $good = <<'EOF_CONF';
children 1;
user %%USER%%;
error_log logs/error.log info;

server {
    listen 127.0.0.1:%%PORT_0%%;
    root html;
    client_max_body_size 2m;
    keepalive_timeout 1m30s;
    location /a/ {
        index a.html index.html;
    }
}
EOF_CONF

# Writes a config file (no trailing newline, so the line of an error at the
# end of the file is that of its last line) and runs gannet -t on it.
sub configtest
{
    my ($name, $text) = @_;
    my $path = $t->write_file($name, $t->expand($text));

    return ($path, $t->gannet('-t', '-p', "$dir/", '-c', $path));
}

# good
{
    my ($f, $rc, $out, $err) = configtest('good.conf', $good);

    is($rc, 0, 'good config: exit 0');
    like($err, qr/^gannet: the configuration file \Q$f\E syntax is ok$/m,
         'good config: syntax is ok');
    like($err,
         qr/^gannet: configuration file \Q$f\E test is successful$/m,
         'good config: test is successful');
    unlike($err, qr/\[emerg\]/, 'good config: no emerg');
}

# a broken config: exit 1, "[emerg] MESSAGE in FILE:LINE", "test failed"
sub bad
{
    my ($name, $text, $msg, $line, $errfile) = @_;
    my ($f, $rc, $out, $err) = configtest("$name.conf", $text);

    $errfile //= $f;
    is($rc, 1, "$name: exit 1");
    like($err, qr/^gannet: \[emerg\] \Q$msg\E in \Q$errfile\E:$line$/m,
         "$name: message names $msg and FILE:$line");
    like($err, qr/^gannet: configuration file \Q$f\E test failed$/m,
         "$name: test failed");
    unlike($err, qr/syntax is ok|test is successful/,
           "$name: no success line");
}

bad('unknown', <<'EOF_CONF', 'unknown directive "lsten"', 5);
children 1;
user %%USER%%;

server {
    lsten 127.0.0.1:%%PORT_0%%;
}
EOF_CONF

my $noeof = <<'EOF_CONF';
children 1;
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%%;
}
shutdown_timeout 5s
EOF_CONF
chomp $noeof;
bad('missing-semicolon', $noeof,
    'unexpected end of file, expecting ";" or "}"', 6);

bad('arity', <<'EOF_CONF',
children 1;
user %%USER%%;

server {
    listen;
}
EOF_CONF
    'invalid number of arguments in "listen" directive', 5);

bad('arity2', <<'EOF_CONF',
children 1 2;
EOF_CONF
    'invalid number of arguments in "children" directive', 1);

bad('size', <<'EOF_CONF',
children 1;
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%%;

    client_max_body_size 10q;
}
EOF_CONF
    'invalid size "10q" in "client_max_body_size" directive', 6);

bad('time', <<'EOF_CONF',
children 1;
server {
    listen 127.0.0.1:%%PORT_0%%;
    keepalive_timeout 5x;
}
EOF_CONF
    'invalid time "5x" in "keepalive_timeout" directive', 4);

# An nginx directive that Gannet spells differently (issue 18, item 9):
# the message says what to write instead.
for my $c (['ssl_certificate', 0, 'ssl_certificate x.pem;',
            'use "tls_certificate"'],
           ['ssl_protocols', 0, 'ssl_protocols TLSv1.2;',
            'use "tls_protocols"'],
           ['worker_processes', 1, 'worker_processes 4;',
            'use "children"'],
           ['http', 1, 'http {', 'Gannet has no http block: write its '
                                 . 'directives at the top level'])
{
    my ($d, $main, $line, $hint) = @$c;
    my $text = "children 1;\nuser %%USER%%;\n";
    $text .= $main ? "$line\n" : "server {\n    $line\n}\n";
    bad("nginx-$d", $text, "unknown directive \"$d\" (an nginx directive: "
                          . "$hint)", $main ? 3 : 4);
}

# gannet -T: test, then print every file read, includes too, in order
# (issue 18, item 9); nothing printed when the test fails.
{
    $t->write_file('dump-inc.conf', "types { text/plain txt; }\n");
    my $main = "children 1;\nuser %%USER%%;\ninclude dump-inc.conf;\n"
               . "server {\n    listen 127.0.0.1:%%PORT_0%%;\n}\n";
    my $path = $t->write_file('dump.conf', $t->expand($main));
    my ($rc, $out, $err) = $t->gannet('-T', '-p', "$dir/", '-c', $path);
    is($rc, 0, '-T: exit 0');
    like($err, qr/test is successful/, '-T: the test result');
    is($out, "# configuration file $path:\n" . $t->expand($main) . "\n"
             . "# configuration file $dir/dump-inc.conf:\n"
             . "types { text/plain txt; }\n\n",
       '-T: the main file, then the included one, each with its name');
    $path = $t->write_file('dump-bad.conf', "children 1;\nlsten 80;\n");
    ($rc, $out, $err) = $t->gannet('-T', '-p', "$dir/", '-c', $path);
    is($rc, 1, '-T on a broken configuration: exit 1');
    is($out, '', '-T on a broken configuration: no dump');
}

# A regex server_name is refused with its line, not kept as a literal
# that never matches (issue 18, item 9).
my $regex_msg = 'regular expression server names ("~^(www\.)?(.+)$") are '
                . 'not supported; use exact names and "*.example.com" '
                . 'wildcards';
bad('server-name-regex', <<'EOF_CONF', $regex_msg, 5);
children 1;
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%%;
    server_name example.com ~^(www\.)?(.+)$;
}
EOF_CONF

# A certificate that cannot be read names its tls_certificate line and
# the errno; one that cannot be parsed names the line too (issue 18,
# item 9).
{
    $t->write_file('garbage.pem', "not a certificate\n");
    my $conf = "children 1;\nuser %%USER%%;\nserver {\n"
               . "    listen 127.0.0.1:%%PORT_0%% tls;\n"
               . "    tls_certificate CERT;\n"
               . "    tls_certificate_key $dir/garbage.pem;\n}\n";
    (my $c = $conf) =~ s/CERT/$dir\/nope.pem/;
    bad('cert-missing', $c, "cannot open \"$dir/nope.pem\" (2: No such file "
                            . "or directory) in \"tls_certificate\" directive",
        5);
    ($c = $conf) =~ s/CERT/$dir\/garbage.pem/;
    my ($f, $rc, $out, $err) = configtest('cert-garbage.conf', $c);
    is($rc, 1, 'cert-garbage: exit 1');
    like($err, qr/\[emerg\] cannot load certificate "\Q$dir\E\/garbage\.pem".*\("tls_certificate" directive in \Q$f\E:5\)/,
         'cert-garbage: names the tls_certificate line');
}

# Log formats, access logs, rewrite and return: each mistake named with
# its line.  main => the lines go before the server block (line 3 on),
# else into it (line 5 on).
sub bad_lines
{
    my ($name, $main, $lines, $msg, $line) = @_;
    my $text = "children 1;\nuser %%USER%%;\n";

    $text .= join('', map { "$_\n" } @$lines) if $main;
    $text .= "server {\n    listen 127.0.0.1:%%PORT_0%%;\n";
    $text .= join('', map { "    $_\n" } @$lines) unless $main;
    $text .= "}\n";
    bad($name, $text, $msg, $line);
}

my @bad_lines = (
    # a directive that is gone says what replaces it (issue 18, item 3)
    [ 'status-allow', 0,
      [ 'location = /status { status_allow "127.0.0.1 ::1"; }' ],
      'unknown directive "status_allow" (removed: use the core "allow" and '
      . '"deny" in the location, e.g. "allow 127.0.0.1; allow ::1; deny '
      . 'all;")', 5 ],
    [ 'real-ip-from', 1, [ 'set_real_ip_from 300.1.1.1;' ],
      '"set_real_ip_from" directive: invalid address "300.1.1.1" (an IPv4 '
      . 'or IPv6 address, a CIDR network or "all")', 3 ],
    [ 'real-ip-header', 0, [ 'real_ip_header "X Real";' ],
      'invalid value "X Real" in "real_ip_header" directive, expected a '
      . 'header field name or "proxy_protocol"', 5 ],
    [ 'real-ip-location', 0,
      [ 'location / { real_ip_from 10.0.0.0/8; }' ],
      '"real_ip_from" directive is not allowed here', 5 ],
    # the proxy (issue 22)
    [ 'proxy-tls-verify', 0,
      [ 'location / { proxy_pass https://127.0.0.1:1; '
        . 'proxy_tls_verify on; }' ],
      '"proxy_tls_verify on" needs "proxy_tls_trusted_certificate" for the '
      . 'proxy_pass', 5 ],
    [ 'proxy-url', 0, [ 'location / { proxy_pass 127.0.0.1:1; }' ],
      'invalid URL "127.0.0.1:1" in "proxy_pass", expected '
      . 'http[s]://HOST[:PORT][/URI]', 5 ],
    [ 'proxy-regex-uri', 0,
      [ 'location ~ \.php$ { proxy_pass http://127.0.0.1:1/x; }' ],
      '"proxy_pass" cannot have a URI part in a location given by a '
      . 'regular expression or a name', 5 ],
    [ 'proxy-named-uri', 0,
      [ 'location @app { proxy_pass http://127.0.0.1:1/x; }' ],
      '"proxy_pass" cannot have a URI part in a location given by a '
      . 'regular expression or a name', 5 ],
    # try_files, alias, add_header, expires, tls_hsts (issue 23, item 1)
    [ 'try-files-named', 0, [ 'location / { try_files $uri @nosuch; }' ],
      'no location "@nosuch" in the server for "try_files"', 5 ],
    [ 'try-files-code', 0, [ 'location / { try_files $uri =999; }' ],
      'invalid code "=999" in "try_files", expected "=" and a status such '
      . 'as 404', 5 ],
    [ 'try-files-last', 0, [ 'try_files $uri index.html;' ],
      'invalid last argument "index.html" in "try_files", expected a URI '
      . '("/..."), "=CODE" or "@NAME"', 5 ],
    [ 'try-files-var', 0, [ 'try_files $nosuch /;' ],
      'unknown variable "$nosuch" in "try_files"', 5 ],
    [ 'internal-server', 0, [ 'internal;' ],
      '"internal" directive is not allowed here', 5 ],
    [ 'alias-and-root', 0, [ 'location /a/ { root /tmp;', '    alias /srv/; }' ],
      '"alias" directive cannot stand with "root" in one location', 6 ],
    [ 'alias-capture', 0,
      [ 'location ~ ^/u/(.+)$ {', '    alias /srv/$2; }' ],
      '"$2" refers to a capture the pattern does not have, in "/srv/$2"', 6 ],
    [ 'add-header-name', 0, [ 'add_header "X Y" 1;' ],
      'invalid header name "X Y" in "add_header"', 5 ],
    [ 'add-header-flag', 0, [ 'add_header X 1 sometimes;' ],
      'invalid parameter "sometimes" in "add_header", expected "always"', 5 ],
    [ 'add-header-var', 0, [ 'add_header X $nosuch;' ],
      'unknown variable "$nosuch" in "add_header"', 5 ],
    [ 'expires-bad', 0, [ 'expires @15h;' ],
      'invalid value "@15h" in "expires", expected [modified] TIME, "epoch", '
      . '"max" or "off" (a time of day, "@...", is not supported)', 5 ],
    # limit_req, limit_conn (issue 23, item 4)
    [ 'limit-req-rate', 1,
      [ 'limit_req_zone $binary_remote_addr zone=a:1m rate=fast;' ],
      'invalid "rate=fast" in "limit_req_zone", expected rate=Nr/s or '
      . 'rate=Nr/m', 3 ],
    [ 'limit-req-zone', 1,
      [ 'limit_req_zone $binary_remote_addr a:1m rate=1r/s;' ],
      'invalid "a:1m" in "limit_req_zone", expected zone=NAME:SIZE', 3 ],
    [ 'limit-req-size', 1,
      [ 'limit_req_zone $binary_remote_addr zone=a:1k rate=1r/s;' ],
      'zone "a" size "1k" is too small or invalid (at least 1184 bytes)',
      3 ],
    [ 'limit-req-dup-zone', 1,
      [ 'limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s;',
        'limit_conn_zone $binary_remote_addr zone=a:1m;' ],
      'duplicate zone "a"', 4 ],
    [ 'limit-req-nozone', 0, [ 'location / { limit_req zone=nosuch; }' ],
      'no limit_req_zone "nosuch" for "limit_req"', 5 ],
    [ 'limit-req-kind', 1,
      [ 'limit_conn_zone $binary_remote_addr zone=c:1m;',
        'limit_req zone=c;' ],
      'no limit_req_zone "c" for "limit_req"', 4 ],
    [ 'limit-req-param', 0, [ 'limit_req zone=a burst=x;' ],
      'invalid parameter "burst=x" in "limit_req", expected burst=N, '
      . 'nodelay or delay=N', 5 ],
    [ 'limit-conn-n', 0, [ 'limit_conn addr 0;' ],
      'invalid number "0" in "limit_conn", expected 1 to 65535', 5 ],
    [ 'limit-conn-level', 0, [ 'limit_conn_log_level loud;' ],
      'invalid value "loud" in "limit_conn_log_level" directive, it must '
      . 'be "info", "notice", "warn" or "error"', 5 ],
    [ 'limit-zone-server', 0,
      [ 'limit_conn_zone $binary_remote_addr zone=c:1m;' ],
      '"limit_conn_zone" directive is not allowed here', 5 ],
    # gzip (issue 23, item 2)
    [ 'gzip-level', 0, [ 'gzip_comp_level 10;' ],
      'invalid value "10" in "gzip_comp_level" directive, it must be "1", '
      . '"2", "3", "4", "5", "6", "7", "8" or "9"', 5 ],
    [ 'gzip-cache-server', 0, [ 'gzip_cache_size 1m;' ],
      '"gzip_cache_size" directive is not allowed here', 5 ],
    [ 'gzip-min-length', 0, [ 'gzip_min_length lots;' ],
      'invalid size "lots" in "gzip_min_length" directive', 5 ],
    [ 'tls-verify-client', 0, [ 'tls_verify_client always;' ],
      'invalid value "always" in "tls_verify_client" directive, it must '
      . 'be "off", "on", "optional" or "optional_no_ca"', 5 ],
    [ 'tls-hsts-bad', 0, [ 'tls_hsts 1y subdomains;' ],
      'invalid parameter "subdomains" in "tls_hsts", expected '
      . '"includeSubDomains" or "preload"', 5 ],
    [ 'proxy-unknown-host', 0,
      [ 'location / { proxy_pass http://no-such-host.invalid; }' ],
      'no upstream "no-such-host.invalid", and the host '
      . '"no-such-host.invalid:80" cannot be resolved', 5 ],
    [ 'proxy-server-level', 0, [ 'proxy_pass http://127.0.0.1:1;' ],
      '"proxy_pass" directive is not allowed here', 5 ],
    [ 'proxy-port', 0, [ 'location / { proxy_pass http://127.0.0.1:99999; }' ],
      'invalid upstream "127.0.0.1:99999": invalid port', 5 ],
    [ 'proxy-next', 0, [ 'proxy_next_upstream error sometimes;' ],
      'invalid value "sometimes" in "proxy_next_upstream", expected error, '
      . 'timeout, invalid_header, http_502, http_503, http_504 or off', 5 ],
    [ 'proxy-redirect-regex', 0, [ 'proxy_redirect ~^http://a /;' ],
      'invalid "proxy_redirect ~^http://a", expected a URL prefix (regular '
      . 'expressions are not supported)', 5 ],
    [ 'proxy-redirect-word', 0, [ 'proxy_redirect sometimes;' ],
      'invalid value "sometimes" in "proxy_redirect", expected default, off '
      . 'or a pair FROM TO', 5 ],
    [ 'proxy-header-name', 0, [ 'proxy_set_header "X Y" 1;' ],
      'invalid header name "X Y" in "proxy_set_header"', 5 ],
    [ 'proxy-header-var', 0, [ 'proxy_set_header X $nosuch;' ],
      'unknown variable "$nosuch" in "proxy_set_header"', 5 ],
    [ 'proxy-buffers', 0, [ 'proxy_buffers 8 100;' ],
      'invalid "proxy_buffers 8 100", expected a number of buffers and '
      . 'their size (1k or more, 64m in all at most)', 5 ],
    [ 'fastcgi-buffers', 0, [ 'fastcgi_buffers 100000 1m;' ],
      'invalid "fastcgi_buffers 100000 1m", expected a number of buffers '
      . 'and their size (1k or more, 64m in all at most)', 5 ],
    # FastCGI (issue 22, item 3)
    [ 'fastcgi-and-proxy', 0,
      [ 'location / { proxy_pass http://127.0.0.1:1;',
        '    fastcgi_pass 127.0.0.1:2; }' ],
      '"proxy_pass" and "fastcgi_pass" in one location', 6 ],
    [ 'fastcgi-no-upstream', 0, [ 'location / { fastcgi_pass app; }' ],
      'no upstream "app" for "fastcgi_pass" (expected HOST:PORT, unix:PATH '
      . 'or the name of an upstream)', 5 ],
    [ 'fastcgi-unix-relative', 0,
      [ 'location / { fastcgi_pass unix:fpm.sock; }' ],
      'invalid upstream "unix:fpm.sock": a unix socket path must be '
      . 'absolute', 5 ],
    [ 'fastcgi-server-level', 0, [ 'fastcgi_pass 127.0.0.1:1;' ],
      '"fastcgi_pass" directive is not allowed here', 5 ],
    [ 'fastcgi-split-captures', 0,
      [ 'fastcgi_split_path_info ^(.+\.php)/.*$;' ],
      '"fastcgi_split_path_info" expects a regular expression with two '
      . 'captures, "^(.+\.php)/.*$" has 1', 5 ],
    [ 'fastcgi-split-regex', 0, [ 'fastcgi_split_path_info ^(.+;' ],
      '"fastcgi_split_path_info": pcre2_compile() failed: missing closing '
      . 'parenthesis at offset 4 in "^(.+"', 5 ],
    [ 'fastcgi-param-flag', 0, [ 'fastcgi_param A $uri always;' ],
      'invalid "fastcgi_param", expected NAME VALUE [if_not_empty]', 5 ],
    [ 'fastcgi-param-var', 0, [ 'fastcgi_param A $nosuch;' ],
      'unknown variable "$nosuch" in "fastcgi_param"', 5 ],
    [ 'fastcgi-next', 0, [ 'fastcgi_next_upstream error maybe;' ],
      'invalid value "maybe" in "fastcgi_next_upstream", expected error, '
      . 'timeout, invalid_header, http_502, http_503, http_504 or off', 5 ],
    [ 'upstream-empty', 1, [ 'upstream a { }' ],
      'no servers in upstream "a"', 3 ],
    [ 'upstream-dup', 1, [ 'upstream a { server 127.0.0.1:1; }',
                           'upstream a { server 127.0.0.1:2; }' ],
      'duplicate upstream "a"', 4 ],
    [ 'upstream-weight', 1, [ 'upstream a { server 127.0.0.1:1 weight=0; }' ],
      'invalid parameter "weight=0" of an upstream server, expected '
      . 'weight=N, max_fails=N, fail_timeout=TIME, backup or down', 3 ],
    [ 'upstream-keepalive', 1,
      [ 'upstream a { server 127.0.0.1:1; keepalive 0; }' ],
      'invalid value "0" of "keepalive" in an upstream block, expected a '
      . 'number, 1 or more', 3 ],
    [ 'upstream-unknown', 1, [ 'upstream a { server 127.0.0.1:1; sticky; }' ],
      'unknown or malformed directive "sticky" in an upstream block, '
      . 'expected server, least_conn, hash, keepalive, keepalive_requests '
      . 'or keepalive_timeout', 3 ],
    [ 'upstream-hash-backup', 1,
      [ 'upstream a { hash $uri; server 127.0.0.1:1; '
        . 'server 127.0.0.1:2 backup; }' ],
      '"backup" servers cannot be used with "hash" in upstream "a"', 3 ],
    [ 'upstream-hash-var', 1,
      [ 'upstream a { hash $nosuch; server 127.0.0.1:1; }' ],
      'unknown variable "$nosuch" in "hash" of an upstream block', 3 ],
    [ 'upstream-two-methods', 1,
      [ 'upstream a { least_conn; hash $uri; server 127.0.0.1:1; }' ],
      '"hash": the upstream\'s balancing method is already set', 3 ],
    [ 'log-var', 1, [ q<log_format f '$nosuch';> ],
      'unknown variable "$nosuch" in "log_format" directive', 3 ],
    [ 'log-brace', 1, [ q<log_format f '${uri';> ],
      'missing "}" after "${uri" in "log_format" directive', 3 ],
    [ 'log-dollar', 1, [ q<log_format f '$ x';> ],
      'invalid variable name after "$" in "log_format" directive', 3 ],
    [ 'log-dup', 1, [ q<log_format f '$uri';>, q<log_format f '$uri';> ],
      'duplicate log_format "f"', 4 ],
    [ 'log-builtin', 1, [ q<log_format combined '$uri';> ],
      'log_format "combined" is built in and cannot be redefined', 3 ],
    [ 'log-escape', 1, [ q<log_format f escape=xml '$uri';> ],
      'unknown escape "xml" in "log_format" directive, it must be '
      . 'default, json or none', 3 ],
    [ 'log-noformat', 1, [ q<log_format f escape=json;> ],
      '"log_format" directive has no format string', 3 ],
    [ 'access-buffer', 0, [ 'access_log logs/a.log combined buffer=big;' ],
      'invalid buffer size "big" in "access_log" directive (1 .. 16m)', 5 ],
    [ 'access-flush', 0, [ 'access_log logs/a.log combined flush=soon;' ],
      'invalid flush time "soon" in "access_log" directive', 5 ],
    [ 'access-param', 0, [ 'access_log logs/a.log combined gzip;' ],
      'invalid parameter "gzip" in "access_log" directive', 5 ],
    [ 'access-off', 0, [ 'access_log off extra;' ],
      '"access_log" directive has invalid parameters after "off"', 5 ],
    [ 'access-format', 0, [ 'access_log logs/a.log nosuchformat;' ],
      'unknown log format "nosuchformat" in "access_log" directive', 5 ],
    [ 'access-binary', 0, [ 'access_log logs/a.log;',
                            'access_log logs/a.log binary;' ],
      qq{"$dir/logs/a.log" is used both for binary and for text records }
      . 'in "access_log" directive', 6 ],
    [ 'rewrite-dollar', 0, [ 'rewrite ^/a /b$;' ],
      'a lone "$" in "/b$" (write "$$" for a dollar sign)', 5 ],
    [ 'rewrite-brace', 0, [ 'rewrite ^/a /b${1;' ],
      'unterminated "${" in "/b${1"', 5 ],
    [ 'rewrite-capture', 0, [ 'rewrite ^/(a) /b$2;' ],
      '"$2" refers to a capture the pattern does not have, in "/b$2"', 5 ],
    [ 'rewrite-var', 0, [ 'rewrite ^/a /b$nosuch;' ],
      'unknown variable or group "$nosuch" in "/b$nosuch"', 5 ],
    [ 'rewrite-flag', 0, [ 'rewrite ^/a /b sometimes;' ],
      'invalid flag "sometimes" in "rewrite" directive, it must be last, '
      . 'break, redirect or permanent', 5 ],
    [ 'rewrite-regex', 0, [ 'rewrite ^/(a /b;' ],
      'pcre2_compile() failed: missing closing parenthesis at offset 4 in '
      . '"^/(a"', 5 ],
    [ 'return-word', 0, [ 'return abc;' ],
      'invalid return code "abc", expected a status or a URL (http://, '
      . 'https://)', 5 ],
    [ 'return-600', 0, [ 'return 600;' ],
      'invalid return code "600", it must be from 200 to 599', 5 ],
    [ 'location-modifier', 0, [ 'location ~~ /a { }' ],
      'invalid location modifier "~~", expected "=", "~", "~*" or "^~"', 5 ],
    [ 'location-slash', 0, [ 'location a { }' ],
      'invalid location "a", it must start with "/" (or "@": a named '
      . 'location)', 5 ],
    [ 'location-dup', 0, [ 'location /a { }', 'location /a { }' ],
      'duplicate location "/a"', 6 ],
    [ 'listen-port', 0, [ 'listen 127.0.0.1:99999;' ],
      'invalid port in "127.0.0.1:99999", expected a number from 1 to 65535 '
      . 'in "listen" directive', 5 ],
    [ 'listen-backlog', 0, [ 'listen 127.0.0.1:8080 backlog=many;' ],
      'invalid backlog "many" in "listen" directive', 5 ],
    [ 'listen-param', 0, [ 'listen 127.0.0.1:8080 fast;' ],
      'invalid parameter "fast" in "listen" directive, expected "tls", '
      . '"http2", "proxy_protocol", "default_server", "deferred", '
      . '"deferred=off" or "backlog=N"', 5 ],
    [ 'chroot-root', 1, [ 'chroot /;' ],
      '"chroot /" changes nothing; remove it', 3 ],
    [ 'types-line', 0, [ 'types { text/html; }' ],
      'invalid number of arguments in "types" line, expected a MIME type and '
      . 'one or more extensions', 5 ],
    [ 'tls-protocol', 1, [ 'tls_protocols SSLv3;' ],
      'unsupported protocol "SSLv3" in "tls_protocols" directive, it must be '
      . '"TLSv1.2" or "TLSv1.3"', 3 ],
    [ 'tls-cache', 1, [ 'tls_session_cache 10q;' ],
      'invalid size "10q" in "tls_session_cache" directive, expected a size '
      . 'such as 4m, or off', 3 ],
    [ 'error-page-uri', 0, [ 'error_page 404 nothere.html;' ],
      'invalid URI "nothere.html" in "error_page" directive, it must start '
      . 'with "/"', 5 ],
    [ 'error-page-status', 0, [ 'error_page 99 /e.html;' ],
      'invalid status "99" in "error_page" directive, it must be from 400 to '
      . '599', 5 ],
    [ 'max-connections', 1, [ 'max_connections 0;' ],
      'invalid number "0" in "max_connections" directive, it must be 1 or '
      . 'more', 3 ],
    [ 'max-headers', 0, [ 'client_max_headers 0;' ],
      'invalid number "0" in "client_max_headers" directive, it must be 1 or '
      . 'more', 5 ],
    [ 'file-cache-entries', 1, [ 'file_cache_entries 0;' ],
      'invalid number "0" in "file_cache_entries" directive, it must be 1 or '
      . 'more', 3 ],
    [ 'rlimit-zero', 1, [ 'rlimit_nofile 0;' ],
      'invalid number "0" in "rlimit_nofile" directive, it must be 1 or '
      . 'more', 3 ],
    [ 'rlimit-negative', 1, [ 'rlimit_nofile -1;' ],
      'invalid number "-1" in "rlimit_nofile" directive', 3 ],
    [ 'rlimit-text', 1, [ 'rlimit_nofile lots;' ],
      'invalid number "lots" in "rlimit_nofile" directive', 3 ],
    # autoindex (issue 23, item 3)
    [ 'autoindex-value', 0, [ 'location / { autoindex yes; }' ],
      'invalid value "yes" in "autoindex" directive, it must be "on" or '
      . '"off"', 5 ],
    [ 'autoindex-format', 1, [ 'autoindex_format xml;' ],
      'invalid value "xml" in "autoindex_format" directive, it must be '
      . '"html" or "json"', 3 ],
    [ 'autoindex-format-args', 0, [ 'autoindex_format html json;' ],
      'invalid number of arguments in "autoindex_format" directive', 5 ],
    [ 'autoindex-format-dup', 0,
      [ 'autoindex_format json;', 'autoindex_format html;' ],
      '"autoindex_format" directive is duplicate', 6 ],
    [ 'autoindex-exact-size', 0, [ 'autoindex_exact_size 1;' ],
      'invalid value "1" in "autoindex_exact_size" directive, it must be '
      . '"on" or "off"', 5 ],
    [ 'autoindex-localtime', 1, [ 'autoindex_localtime local;' ],
      'invalid value "local" in "autoindex_localtime" directive, it must '
      . 'be "on" or "off"', 3 ],
    [ 'autoindex-args', 0, [ 'location / { autoindex; }' ],
      'invalid number of arguments in "autoindex" directive', 5 ],
);
bad_lines(@$_) for @bad_lines;

bad('children', <<'EOF_CONF',
user %%USER%%;
children lots;
server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF_CONF
    'invalid value "lots" in "children" directive, it must be "auto" or a '
    . 'number from 1 to 256', 2);

SKIP: {
    skip('a user is looked up only when started as root', 8) if $> != 0;

    for my $u (['nosuchuser_gn', 'getpwnam("nosuchuser_gn") failed: no such '
                                 . 'user'],
               ['nobody nosuchgroup_gn', 'getgrnam("nosuchgroup_gn") failed: '
                                         . 'no such group'])
    {
        bad('user', <<"EOF_CONF", "$u->[1] in \"user\" directive", 2);
children 1;
user $u->[0];
server {
    listen 127.0.0.1:%%PORT_0%%;
}
EOF_CONF
    }
}

# An error in an included file (relative include: relative to the
# directory of the main file) names the included file and its line.
$t->write_file('inc/bad.conf', <<'EOF_CONF');
# included

keepalive_requests 10;
sendfile maybe;
EOF_CONF

{
    my ($f, $rc, $out, $err) = configtest('incl.conf', <<'EOF_CONF');
children 1;
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%%;
    include inc/bad.conf;
}
EOF_CONF

    is($rc, 1, 'include: exit 1');
    like($err,
         qr/^gannet: \[emerg\] .*"sendfile".* in \Q$dir\E\/inc\/bad\.conf:4$/m,
         'include: message names the included FILE:LINE');
    like($err, qr/^gannet: configuration file \Q$f\E test failed$/m,
         'include: test failed');
}

# A good include works too.
$t->write_file('inc/good.conf', "keepalive_requests 10;\n");
{
    my ($f, $rc, $out, $err) = configtest('incl-good.conf', <<'EOF_CONF');
children 1;
user %%USER%%;
server {
    listen 127.0.0.1:%%PORT_0%%;
    include inc/good.conf;
}
EOF_CONF
    is($rc, 0, 'good include: exit 0') or diag($err);
}

# A missing configuration file.
{
    my ($rc, $out, $err) = $t->gannet('-t', '-p', "$dir/", '-c',
                                      "$dir/nonexistent.conf");
    is($rc, 1, 'missing file: exit 1');
    like($err, qr/^gannet: \[emerg\] .*\Q$dir\E\/nonexistent\.conf/m,
         'missing file: [emerg] names the file');
}

# -v, -h, a bad option
{
    my ($rc, $out, $err) = $t->gannet('-v');
    is($rc, 0, '-v: exit 0');
    is($out . $err, "gannet version: gannet/0.1.0\n", '-v: the version '
                                                    . 'line alone');
    for my $o ('-V', '--version') {
        ($rc, $out, $err) = $t->gannet($o);
        is($rc, 0, "$o: exit 0");
        like($out . $err, qr{^gannet version: gannet/0\.1\.0$}m,
             "$o: version");
        like($out . $err, qr/gnutls/i, "$o: mentions GnuTLS");
        like($out . $err, qr/^configure arguments:/m,
             "$o: the configure arguments");
    }

    ($rc, $out, $err) = $t->gannet('-h');
    is($rc, 0, '-h: exit 0');
    like($out . $err, qr/usage/i, '-h: usage');

    ($rc, $out, $err) = $t->gannet('-Z');
    is($rc, 1, 'bad option: exit 1');
    like($err, qr/usage/i, 'bad option: usage on stderr');
}

# Starting with a broken configuration: exit 1, [emerg] on stderr.
{
    my $f = $t->write_file('broken.conf', $t->expand(<<'EOF_CONF'));
children 1;
user %%USER%%;

server {
    listen 127.0.0.1:%%PORT_0%%;
    bogus_directive on;
}
EOF_CONF
    my ($rc, $out, $err) = $t->gannet('-f', '-p', "$dir/", '-c', $f);

    is($rc, 1, 'start with a broken config: exit 1');
    my $msg = 'unknown directive "bogus_directive"';
    like($err, qr/^gannet: \[emerg\] \Q$msg\E in \Q$f\E:6$/m,
         'start with a broken config: [emerg] on stderr');
    ok(!-e "$dir/logs/gannet.pid", 'no pid file written');
    ok(!$t->probe($t->port(0)), 'nothing listens');
}

# The server may also have logged the failed start in its error log.
$t->expect_log(qr/\[emerg\] unknown directive "bogus_directive"/);

$t->done;
