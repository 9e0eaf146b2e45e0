#!/bin/sh
# Regenerate the build system. Nothing generated is committed.
set -e
cd "$(dirname "$0")"
mkdir -p m4 build-aux
exec autoreconf -fi
