#!/bin/bash
# How far behind Cyclone DDS itself does the message bridge forward?
#
#   tools/bench/bridge.sh [--link=lo|veth|both] [--seconds=N] [--json=FILE]
#                         [--ping_interval_us=N] [--security=both|off]
#                         [--latency_rounds=N] [--dry-run]
#
# For each link, side by side in one run: ddsperf ping/pong's round trip and
# ours (ping on node pi1, pong on pi2, through both message bridges), ping
# and pong on one node without a bridge, the bridges' one-way latency
# histograms, and the rate of 32 B messages
# ddsperf pub/sub moves against what the bridges forward from bridge_flood
# on pi1 to pi2. lo: both nodes on loopback; veth: pi1 and pi2 in two
# network namespaces joined by a veth pair (tools/netns_pair.sh; needs
# root); both (the default as root; lo otherwise). --security=both (the
# default) measures the bridges' round trip and rate twice without and
# twice with DDS Security on both (tools/dds_security/make_test_ca.sh's
# certificates), in the order plain, secure, secure, plain: what
# authentication and encryption cost, in the same run; off measures the
# plain bridges once. The round trips (ddsperf's, the local one, the bare
# relays' and the bridges') are measured back to back --latency_rounds
# times (default 3), and the latency goal is judged on the median round.
# --seconds (default 5) is the length of each measurement (24 per link,
# 15 with --security=off). It builds what it
# needs, then holds the build lock (/tmp/aos-bazel.lock) while it measures
# so that builds do not disturb the figures. --dry-run prints what it
# would run and stops. docs/benchmarks.md shows a real run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# The comment block at the top of this file, whatever its length.
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
}
fail() {
  echo "bridge.sh: $*" >&2
  exit 1
}

link="" seconds=5 json="" interval_us=1000 dry_run=0 security=both rounds=3
for arg in "$@"; do
  case "${arg}" in
    --link=*) link="${arg#--link=}" ;;
    --seconds=*) seconds="${arg#--seconds=}" ;;
    --json=*) json="${arg#--json=}" ;;
    --ping_interval_us=*) interval_us="${arg#--ping_interval_us=}" ;;
    --security=*) security="${arg#--security=}" ;;
    --latency_rounds=*) rounds="${arg#--latency_rounds=}" ;;
    --dry-run) dry_run=1 ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      echo "bridge.sh: unknown argument '${arg}' (try --help)" >&2
      exit 2
      ;;
  esac
done
[[ "${seconds}" =~ ^[1-9][0-9]*$ ]] ||
  fail "--seconds=${seconds}: give a whole number of seconds, 1 or more"
[[ "${interval_us}" =~ ^[1-9][0-9]*$ ]] ||
  fail "--ping_interval_us=${interval_us}: give a whole number of microseconds"
[[ "${rounds}" =~ ^[1-9][0-9]*$ && "${rounds}" -le 20 ]] ||
  fail "--latency_rounds=${rounds}: give a whole number of rounds, 1 to 20"
[[ "${security}" == both || "${security}" == off ]] ||
  fail "--security=${security}: give both (plain and secure bridges) or off"
if [[ -z "${link}" ]]; then
  if [[ "$(id -u)" == 0 ]]; then link=both; else link=lo; fi
fi
case "${link}" in
  lo) links=lo ;;
  veth) links=veth ;;
  both) links=lo,veth ;;
  *) fail "--link=${link}: give lo, veth or both" ;;
esac
if [[ "${links}" == *veth* && "$(id -u)" != 0 ]]; then
  fail "--link=${link}: the veth link needs root (network namespaces); use --link=lo"
fi

# sbazel serialises builds on this machine; plain bazel elsewhere.
bazel_cmd=bazel
command -v sbazel >/dev/null && bazel_cmd=sbazel
targets=(//tools/bench:bridge_bench //tools/bench:bridge_flood
  //tools/bench:bare_relay
  //tools/bench:bridge_bench_config //aos/network:message_bridge
  //aos/tools:aos_timing_report_streamer
  //examples:ping //examples:pong //examples:pingpong_config)
lock=/tmp/aos-bazel.lock
netns=aosbench
bench_args=(--links="${links}" --seconds="${seconds}"
  --ping_interval_us="${interval_us}" --netns="${netns}"
  --security="${security}" --latency_rounds="${rounds}")
[[ -n "${json}" ]] && bench_args+=(--json="$(realpath -m "${json}")")

if ((dry_run)); then
  echo "build:   flock -o ${lock} ${bazel_cmd} build -c opt ${targets[*]}"
  [[ "${links}" == *veth* ]] && echo "netns:   tools/netns_pair.sh up ${netns}"
  echo "measure: flock -o ${lock} bazel-bin/tools/bench/bridge_bench" \
    "--work_dir=/dev/shm/aos_bridge_bench.XXXXXX ${bench_args[*]}"
  exit 0
fi

command -v ddsperf >/dev/null ||
  fail "ddsperf is missing: apt-get install cyclonedds-tools"
# The build, too, under the lock every build on this machine takes. -o: the
# lock's descriptor is closed in bazel, so a bazel server this build starts
# does not inherit it and hold the lock for its whole idle life (3 hours).
flock -o "${lock}" "${bazel_cmd}" build -c opt "${targets[@]}"

work="$(mktemp -d /dev/shm/aos_bridge_bench.XXXXXX)"
pid="" group="" made_netns=0
cleanup() {
  # The bench and everything it started are one process group (setsid). A
  # bench that stopped on an error leaves what it started running, so the
  # group is ended whether or not the bench itself is still there.
  if [[ -n "${group}" ]] && kill -0 -- "-${group}" 2>/dev/null; then
    kill -TERM -- "-${group}" 2>/dev/null || true
    sleep 1
    kill -KILL -- "-${group}" 2>/dev/null || true
  fi
  ((made_netns)) && tools/netns_pair.sh down "${netns}"
  rm -rf "${work}"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ "${links}" == *veth* ]]; then
  tools/netns_pair.sh up "${netns}"
  made_netns=1
fi
status=0
setsid flock -o "${lock}" bazel-bin/tools/bench/bridge_bench \
  --work_dir="${work}" "${bench_args[@]}" &
pid=$!
group="${pid}"
wait "${pid}" || status=$?
pid=""
exit "${status}"
