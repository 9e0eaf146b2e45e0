#!/bin/sh
echo "about to crash" >&2
kill -SEGV $$
