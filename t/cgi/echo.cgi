#!/bin/sh
# Echoes the request body after its declared length.
printf 'Content-Type: application/octet-stream\n\n'
printf 'CL=%s\n' "$CONTENT_LENGTH"
exec cat
