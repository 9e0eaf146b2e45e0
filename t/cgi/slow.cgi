#!/bin/sh
# A first line, then silence, then a second line (streaming).
echo "pid $$" >&2
printf 'Content-Type: text/plain\n\n'
echo first
sleep "${QUERY_STRING:-2}"
echo second
