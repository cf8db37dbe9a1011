#!/bin/sh
# SPDX-License-Identifier: MIT
# Run one libFuzzer target for SECONDS from the seed corpus, new inputs to
# OUT; print the executions and the coverage it reached.
# usage: run.sh FUZZER OUT SEEDS SECONDS
set -eu
mkdir -p "$2"
exec "$1" -max_total_time="$4" -seed=1 -print_final_stats=1 "$2" "$3"
