#!/bin/sh
# CI suite: a build with every optional backend off, its unit tests and
# Apache::Test (event).
exec "$(dirname "$0")/../../scripts/test-nobackends"
