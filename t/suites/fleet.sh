#!/bin/sh
# CI suite: two nodes (PID and mount namespaces of their own) sharing one
# cache directory, restarted in turn under load.
exec "$(dirname "$0")/../../scripts/test-fleet"
