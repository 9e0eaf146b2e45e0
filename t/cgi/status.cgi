#!/bin/sh
printf 'Status: 404 Not Found\nContent-Type: text/plain\nX-Cgi: yes\n\nnot here\n'
