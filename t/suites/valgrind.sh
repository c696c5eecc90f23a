#!/bin/sh
# CI suite: the Apache::Test suite with httpd as one process (-X) under
# valgrind (signal.t left out: it needs children; caches.t: it needs
# compression at idle, which the controller does not afford there).
ADF_VALGRIND=1 ADF_MPM=event ADF_LOGS=valgrind exec "$(dirname "$0")/../../scripts/run-httpd-tests"
