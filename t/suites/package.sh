#!/bin/sh
# CI suite: the Debian package built, linted, installed and purged.
exec "$(dirname "$0")/../../scripts/test-package"
