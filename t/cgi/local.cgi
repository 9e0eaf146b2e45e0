#!/bin/sh
printf 'Location: /static.txt\n\n'
