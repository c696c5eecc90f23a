#!/bin/sh
# CI suite: the Apache::Test suite under mpm_prefork.
ADF_MPM=prefork exec "$(dirname "$0")/../../scripts/run-httpd-tests"
