#!/bin/sh
# CI suite: the benchmark harness's smoke test.
exec "$(dirname "$0")/../../scripts/test-bench-smoke"
