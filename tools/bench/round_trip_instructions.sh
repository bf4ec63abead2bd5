#!/bin/bash
# What path origins add to one ping/pong round trip, in instructions:
# ping and pong run under callgrind with --path_origins on, then off, for
# two numbers of round trips; the difference between the two counts, per
# round trip, leaves out start-up and shutdown. Instructions do not depend
# on what else the machine does, so this holds on a loaded machine where a
# wall-clock comparison of two runs does not (docs/benchmarks.md, "Path
# latency: what origins cost").
#
#   tools/bench/round_trip_instructions.sh [FEW] [MANY]   (default 300 1300)
#
# Needs valgrind and a built //examples:ping //examples:pong
# //examples:pingpong_config //aos/tools:aos_dump (bazel-bin). Takes about a minute: ping runs at
# its 100 Hz under valgrind.
set -euo pipefail
cd "$(dirname "$0")/../.."
few="${1:-300}"
many="${2:-1300}"
config=bazel-bin/examples/pingpong_config.json
work="$(mktemp -d "${TMPDIR:-/tmp}/round_trip_instructions.XXXXXX")"
trap 'rm -rf "${work}"' EXIT

# Instructions of ping plus pong for $2 round trips with --path_origins=$1.
instructions() {
  local origins="$1" count="$2" base pong total=0 who
  base="$(mktemp -d /dev/shm/round_trip_instructions.XXXXXX)"
  valgrind --tool=callgrind --callgrind-out-file="${work}/pong.cg" \
    bazel-bin/examples/pong --config="${config}" --shm_base="${base}" \
    --path_origins="${origins}" --priority=0 --minloglevel=1 \
    >/dev/null 2>"${work}/pong.err" &
  pong=$!
  # pong's first timing report: it runs, its watcher registered.
  bazel-bin/aos/tools/aos_dump --config="${config}" --shm_base="${base}" \
    --count=1 /aos aos.timing.Report >/dev/null
  valgrind --tool=callgrind --callgrind-out-file="${work}/ping.cg" \
    bazel-bin/examples/ping --config="${config}" --shm_base="${base}" \
    --path_origins="${origins}" --priority=0 --count="${count}" \
    --minloglevel=1 >"${work}/ping.out" 2>"${work}/ping.err"
  kill -INT "${pong}"
  wait "${pong}" || true
  rm -rf "${base}"
  grep -q " ${count} pongs, " "${work}/ping.out" || {
    echo "round_trip_instructions: ping did not get ${count} pongs: $(cat "${work}/ping.out")" >&2
    exit 1
  }
  for who in ping pong; do
    total=$((total + $(sed -n 's/^summary: //p' "${work}/${who}.cg")))
  done
  echo "${total}"
}

for origins in true false; do
  a="$(instructions "${origins}" "${few}")"
  b="$(instructions "${origins}" "${many}")"
  per=$(((b - a) / (many - few)))
  echo "path_origins=${origins}: ${per} instructions per round trip (ping + pong)"
  eval "per_${origins}=${per}"
done
# shellcheck disable=SC2154
echo "origins add $((per_true - per_false)) instructions per round trip"
