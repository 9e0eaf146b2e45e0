#!/bin/sh
# Starts the response, then hangs: the time limit cuts it.
printf 'Content-Type: text/plain\n\nbegun\n'
echo "pid $$" >&2
exec sleep 30
