#!/bin/sh
printf 'Content-Type: text/plain\n\nshould not run\n'
