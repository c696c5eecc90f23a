#!/bin/sh
# CI suite: the Apache::Test suite under mpm_worker.
ADF_MPM=worker exec "$(dirname "$0")/../../scripts/run-httpd-tests"
