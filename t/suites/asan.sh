#!/bin/sh
# CI suite: unit tests and Apache::Test (event, prefork) with the module
# built with ASan+UBSan.
exec "$(dirname "$0")/../../scripts/check-asan"
