#!/bin/sh
# Prints the CGI environment, one NAME=value per line, and the uid.
printf 'Content-Type: text/plain\r\n\r\n'
env | sort
echo "UID=$(id -u)"
echo "CWD=$(pwd)"
echo "ARGC=$#"
