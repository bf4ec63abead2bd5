#!/bin/bash
# How much later than the machine itself does aos wake you up?
#
#   tools/bench/latency.sh [--long] [--main_job_only] [--json=FILE]
#                          [--plot=FILE.png] [--priority=80]
#                          [--interval_us=1000]
#
# First the main job (ping + pong at 100 Hz, SCHED_FIFO 5) with and without
# the CPU wakeup limit the loops hold, at normal priority, and pinned with
# the limit on all CPUs or per CPU, beside cyclictest at the same rate
# (--main_job_only stops there). Then, with the limit held for everything:
# ping's timer against cyclictest, pong's watcher against sigwaittest -f and
# ptsematest, timing reports on vs off, and scale (1, 10, 100 timers; 1, 4,
# 16 watcher processes), all at the same priority and interval, in rounds
# that each run every measurement in turn (A/B/A/B). About 4 minutes;
# --long: rounds of 20 s, about 30 minutes. Prints a table and writes a
# JSON file and an OSADL-style plot. docs/benchmarks.md shows a real run.
# Run from the repository root, as root (or with rtprio allowed) for
# SCHED_FIFO.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

args=()
for arg in "$@"; do
  case "${arg}" in
    --long) args+=(--long_run) ;;
    --main_job_only) args+=(--main_job_only) ;;
    --json=* | --plot=* | --priority=* | --interval_us=*) args+=("${arg}") ;;
    -h | --help)
      # The comment block at the top of this file, whatever its length.
      awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
      exit 0
      ;;
    *)
      echo "latency.sh: unknown argument '${arg}' (try --help)" >&2
      exit 2
      ;;
  esac
done

./tools/aos.sh install
if ! command -v gnuplot >/dev/null; then
  echo "latency.sh: installing gnuplot-nox for the plot" >&2
  if [[ "$(id -u)" == 0 ]]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox >/dev/null
  else
    echo "latency.sh: as root run: apt-get install -y gnuplot-nox" >&2
    exit 1
  fi
fi
./tools/aos.sh bazel build -c opt //tools/bench:latency_bench \
  //tools/bench:scale_app //tools/bench:scale_config //examples:ping \
  //examples:pong //aos/tools:aos_timing_report_streamer \
  //tools/bench:timing_benchmark //tools/bench:timing_report_benchmark \
  //tools/bench:shm_wakeup_benchmark
exec bazel-bin/tools/bench/latency_bench --bin_dir=bazel-bin "${args[@]}"
