#!/bin/sh
# CI suite: dictionary transport (dcz) in headless chromium.
exec "$(dirname "$0")/../../scripts/test-browser"
