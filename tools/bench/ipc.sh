#!/bin/bash
# Our shared-memory channels beside iceoryx 2.0, in the same run.
#
#   tools/bench/ipc.sh [--priority=N] [--count=N] [--throughput_seconds=S]
#                      [--runs=N] [--payloads=32,1024] [--json=FILE]
#                      [--dry-run]
#
# A ping/pong process pair of ours (aos_pingpong: ShmEventLoop, a watcher)
# and of iceoryx's (iceoryx_pingpong: a WaitSet), alternating A B B A, at
# 1000 Hz and SCHED_FIFO 80 (--priority), 32 B and 1 KiB payloads: wakeup
# latency p50/p99 and round trip, then messages/s of a 256-deep queue
# flooded for --throughput_seconds (default 2), each side's and the ratio;
# issue 27's goals met or MISSED. --count (default 5000) messages per
# latency run, --runs (default 4) runs. It builds what it needs, starts
# iox-roudi with tools/bench/iox_roudi.toml and stops it on any exit (its
# shared memory too); if another iox-roudi runs on the machine it stops
# with one line and leaves that one alone (iceoryx 2.0 allows one). It
# holds the build lock (/tmp/aos-bazel.lock) while it measures so that
# builds do not disturb the figures. --dry-run prints what it would run
# and stops. docs/benchmarks.md ("Beside iceoryx") shows a real run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
fail() {
  echo "ipc.sh: $*" >&2
  exit 1
}

bench_args=()
json="" dry_run=0
for arg in "$@"; do
  case "${arg}" in
    --priority=* | --count=* | --throughput_seconds=* | --runs=* | --payloads=*)
      bench_args+=("${arg}")
      ;;
    --json=*) json="${arg#--json=}" ;;
    --dry-run) dry_run=1 ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      echo "ipc.sh: unknown argument '${arg}' (try --help)" >&2
      exit 2
      ;;
  esac
done
[[ -n "${json}" ]] && bench_args+=(--json="$(realpath -m "${json}")")

bazel_cmd=(./tools/aos.sh bazel)
targets=(//tools/bench:ipc_bench //tools/bench:aos_pingpong
  //tools/bench:iceoryx_pingpong)
lock=/tmp/aos-bazel.lock

if ((dry_run)); then
  echo "build:   flock -o ${lock} ${bazel_cmd[*]} build -c opt ${targets[*]}"
  echo "roudi:   iox-roudi -c tools/bench/iox_roudi.toml"
  echo "measure: flock -o ${lock} bazel-bin/tools/bench/ipc_bench" \
    "--work_dir=/dev/shm/aos_ipc_bench.XXXXXX ${bench_args[*]}"
  exit 0
fi

command -v iox-roudi >/dev/null ||
  fail "iox-roudi is missing: apt-get install iceoryx"

# shellcheck source=tools/bench/iox_roudi.sh
source tools/bench/iox_roudi.sh
work=""
pid=""
cleanup() {
  # The build, then the bench and the pairs it started, each one process
  # group (setsid): a signal to ipc.sh ends what it waits for, too.
  if [[ -n "${pid}" ]] && kill -0 "${pid}" 2>/dev/null; then
    kill -TERM -- "-${pid}" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-${pid}" 2>/dev/null || true
  fi
  roudi_stop
  [[ -z "${work}" ]] || rm -rf "${work}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

setsid flock -o "${lock}" "${bazel_cmd[@]}" build -c opt "${targets[@]}" &
pid=$!
wait "${pid}" || exit $?
pid=""
work="$(mktemp -d /dev/shm/aos_ipc_bench.XXXXXX)"
roudi_start tools/bench/iox_roudi.toml "${work}/roudi.log" || exit 1
status=0
setsid flock -o "${lock}" bazel-bin/tools/bench/ipc_bench \
  --work_dir="${work}" "${bench_args[@]}" &
pid=$!
wait "${pid}" || status=$?
pid=""
exit "${status}"
