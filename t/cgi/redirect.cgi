#!/bin/sh
printf 'Location: http://example.com/elsewhere\n\n'
