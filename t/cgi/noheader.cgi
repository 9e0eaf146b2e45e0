#!/bin/sh
echo "hello world, no header here"
