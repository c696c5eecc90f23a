#!/bin/sh
# CI suite: the Apache::Test suite under mpm_event.
ADF_MPM=event exec "$(dirname "$0")/../../scripts/run-httpd-tests"
