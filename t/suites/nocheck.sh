#!/bin/sh
# CI suite: configure, make and make install without libcheck.
exec "$(dirname "$0")/../../scripts/test-nocheck"
