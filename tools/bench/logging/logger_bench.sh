#!/bin/bash
# What aos_logger costs ping's timer (with/without, alternating rounds) and
# how fast it records 1 KiB messages to /dev/shm. About 3 minutes. Run from
# anywhere, as root (ping runs at SCHED_FIFO 5). It builds what it needs,
# then holds the build lock (/tmp/aos-bazel.lock) while it measures so that
# builds do not share the CPUs with it. docs/benchmarks.md.
#
#   tools/bench/logging/logger_bench.sh [--rounds=6] [--seconds=10]
#       [--rate_mb_s=250] [--messages=400000] [--compressions=none,lz4,zstd]
#       [--latency=false] [--throughput=false] [--poll_period_ms=N]
#       [--origins=0..4]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
./tools/aos.sh bazel build -c opt //tools/bench/logging:logger_bench \
  //aos/events/logging:aos_logger //examples:ping //examples:pong \
  //examples:pingpong_config
exec flock -o /tmp/aos-bazel.lock \
  bazel-bin/tools/bench/logging/logger_bench --bin_dir=bazel-bin "$@"
