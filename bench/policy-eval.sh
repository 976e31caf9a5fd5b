#!/usr/bin/env bash
# Median cost of one static-policy decision on execd/policy.example against a
# joined-string prefix match (the baseline it replaces), same run; fails when
# a decision costs more than 5% of the daemon's 2 ms overhead budget.
#   bench/policy-eval.sh [--quick]     (BUILD_DIR=build by default)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD_DIR=${BUILD_DIR:-$here/../build}
# Absolute: the scripts cd, pivot into new roots and enter namespaces, where
# a BUILD_DIR relative to the caller's directory (BUILD_DIR=build) means nothing.
BUILD_DIR=$(cd "$BUILD_DIR" && pwd) || { echo "BUILD_DIR '$BUILD_DIR' not found" >&2; exit 1; }
SOURCE_DIR=${SOURCE_DIR:-$here/..}
exec "$BUILD_DIR/bench/bench-policy-eval" "$SOURCE_DIR/execd/policy.example" "$@"
