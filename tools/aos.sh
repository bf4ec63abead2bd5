#!/bin/bash
# The one entry point: installs what aos needs from Debian, then runs Bazel.
#
#   tools/aos.sh run      the main job: ping + pong + the streamer (README.md)
#                         --log=FILE.mcap also records the run (docs/logging.md)
#   tools/aos.sh run --multinode   the same across two nodes and two bridges
#   tools/aos.sh test     every test; ends with "N passed, N failed"
#   tools/aos.sh build    bazel build //...
#   tools/aos.sh install  install the Debian packages and the tests' npm ones
#   tools/aos.sh bazel ARGS...   any other Bazel command, after installing
#
# Debian packages are installed only when missing (apt-get update first,
# then apt-get install -y), so a second run does no network traffic at all.
# The npm packages one test needs are installed by test, install and
# `bazel test` only: run and build never touch the npm registry.
set -euo pipefail

readonly ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Paths the user gives (run --log=FILE) are relative to where they ran us.
readonly CALLER_DIR="${PWD}"
cd "${ROOT}"

# Debian bookworm packages aos builds, tests and benchmarks with.
readonly PACKAGES=(
  bazel-bootstrap
  g++
  flatbuffers-compiler
  libflatbuffers-dev
  libabsl-dev
  libgoogle-glog-dev
  libgflags-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  rt-tests
  # The streamer's --plot and --metrics_port.
  gnuplot-nox
  libcivetweb-dev
  # promtool checks the metrics in a test.
  prometheus
  # Tests parse our JSON with a strict parser.
  python3
  # The message bridge (aos/network) and its benchmark baseline, ddsperf;
  # multi-node tests and runs join network namespaces with veth pairs.
  cyclonedds-dev
  cyclonedds-tools
  iproute2
  # The bridge's DDS Security: its files are checked with libcrypto, and
  # tools/dds_security/make_test_ca.sh makes test certificates with openssl.
  libssl-dev
  openssl
  # MCAP logs (aos/events/logging): chunk compression and CRC-32, and Node
  # for the test that reads our logs with the MCAP project's own reader.
  libzstd-dev
  liblz4-dev
  libdeflate-dev
  nodejs
  npm
  # This kernel may lack tc's netem: tools/netdelay delays a veth link's
  # packets from user space through an iptables NFQUEUE instead.
  iptables
  libnetfilter-queue-dev
)

log() { echo "aos: $*" >&2; }

missing_packages() {
  local package
  for package in "${PACKAGES[@]}"; do
    # A Node from elsewhere (NodeSource's nodejs) bundles its own npm and
    # conflicts with Debian's: any working npm will do.
    if [[ "${package}" == npm ]] && command -v npm >/dev/null; then continue; fi
    if ! dpkg-query -W -f='${Status}' "${package}" 2>/dev/null |
      grep -q "install ok installed"; then
      echo "${package}"
    fi
  done
}

install_packages() {
  local missing
  missing="$(missing_packages)"
  if [[ -z "${missing}" ]]; then
    return 0
  fi
  # shellcheck disable=SC2086
  log "installing missing Debian packages:" ${missing}
  local sudo=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      log "not root and no sudo; as root run: apt-get update && apt-get install -y" ${missing}
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -qq >/dev/null
  # shellcheck disable=SC2086
  "${sudo[@]}" apt-get install -y -qq ${missing} >/dev/null
  missing="$(missing_packages)"
  if [[ -n "${missing}" ]]; then
    log "still missing after apt-get install:" ${missing}
    exit 1
  fi
}

# The npm packages a test reads our MCAP logs with (the MCAP project's own
# TypeScript reader), pinned by aos/events/logging/mcap_check/package-lock.json
# and installed next to it (node_modules is ignored by git). Only for test,
# install and `bazel test` (run and build need no registry), and only when
# the lock file changed since the last install: a second run does no network
# traffic. Without a registry it says so in one line and the tests run on
# (mcap_check_test then fails naming what is missing).
readonly NPM_DIR="${ROOT}/aos/events/logging/mcap_check"
install_npm_packages() {
  local stamp="${NPM_DIR}/node_modules/.aos-installed-lock"
  if [[ -f "${stamp}" ]] && cmp -s "${stamp}" "${NPM_DIR}/package-lock.json"; then
    return 0
  fi
  log "installing the npm packages of ${NPM_DIR#"${ROOT}"/} (npm ci)"
  local errors
  errors="$(mktemp)"
  if ! (cd "${NPM_DIR}" && npm ci --no-audit --no-fund --ignore-scripts \
    --loglevel=error >/dev/null 2>"${errors}"); then
    log "npm ci failed (no npm registry?); only mcap_check_test needs it: $(grep -m 1 -i 'err' "${errors}" || tail -n 1 "${errors}")"
    rm -f "${errors}"
    return 0
  fi
  rm -f "${errors}"
  cp "${NPM_DIR}/package-lock.json" "${stamp}"
}

bazel_cmd() {
  local extra=()
  if [[ ! -t 2 ]]; then extra=(--color=no --curses=no); fi
  bazel "$1" "${extra[@]}" "${@:2}"
}

# Says, for each skipped or disabled test case in a test target's
# googletest XML, its name and the reason it printed (GTEST_SKIP() << "why").
# Only says; never fails the run.
skip_reasons() {
  python3 - "$1" "$2" >&2 <<'PY' || true
import sys
import xml.etree.ElementTree as tree
target, path = sys.argv[1], sys.argv[2]
try:
    cases = list(tree.parse(path).iter("testcase"))
except (OSError, tree.ParseError) as error:
    print(f"aos: {target}: skipped tests, but {path} does not parse: {error}")
    sys.exit(0)
for case in cases:
    name = f"{target} {case.get('classname')}.{case.get('name')}"
    skipped = case.find("skipped")
    if skipped is not None:
        lines = (skipped.get("message") or "").strip().splitlines()
        if len(lines) > 1:
            reason = lines[-1]
        else:
            reason = "no reason given" + (f" ({lines[0]})" if lines else "")
        print(f"aos: {name} skipped: {reason}")
    elif case.get("status") == "notrun":
        print(f"aos: {name} disabled")
PY
}

# Sums the googletest XML of every test target into "N passed, N failed".
# A target that failed without usable results (build failure, crash before
# writing XML, timeout) counts as one failure.
summarize_tests() {
  local summary_file="$1"
  local passed=0 failed=0 skipped=0
  local target status xml counts
  while read -r target status; do
    xml="bazel-testlogs/${target#//}"
    xml="${xml/://}/test.xml"
    counts="0 0 0"
    if [[ "${status}" == PASSED || "${status}" == FAILED ]] && [[ -f "${xml}" ]]; then
      counts="$(awk '
        /<testsuite[ >]/ {
          n = split($0, parts, " ")
          for (i = 1; i <= n; i++) {
            if (split(parts[i], kv, "=") == 2) {
              gsub(/[">\/]/, "", kv[2])
              value[kv[1]] = kv[2] + 0
            }
          }
          tests += value["tests"]; fails += value["failures"] + value["errors"]
          skips += value["skipped"] + value["disabled"]
          delete value
        }
        END { printf "%d %d %d", tests - fails - skips, fails, skips }' "${xml}")"
    fi
    read -r p f s <<<"${counts}"
    if [[ "${status}" != PASSED && "${f}" == 0 ]]; then
      log "${target}: ${status}"
      f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + s))
    if ((s > 0)); then skip_reasons "${target}" "${xml}"; fi
  done < <(sed -nE 's#^(//[^ ]+)[[:space:]]+(\(cached\) )?(PASSED|FAILED TO BUILD|FAILED|NO STATUS|TIMEOUT|FLAKY|INCOMPLETE|SKIPPED)( .*)?$#\1 \3#p' "${summary_file}" |
    sed -E 's/ (FAILED TO BUILD|NO STATUS)$/ NOT_RUN/')
  if ((skipped > 0)); then
    echo "${passed} passed, ${failed} failed, ${skipped} skipped"
  else
    echo "${passed} passed, ${failed} failed"
  fi
}

run_tests() {
  local output status=0
  output="$(mktemp)"
  bazel_cmd test //... --keep_going --test_summary=short "$@" 2>&1 | tee "${output}" || status=$?
  if ! grep -qE '^//[^ ]+ ' "${output}"; then
    log "bazel test reported no test targets (exit ${status})"
    echo "0 passed, 1 failed"
    rm -f "${output}"
    return 1
  fi
  local line
  line="$(summarize_tests "${output}")"
  rm -f "${output}"
  echo "${line}"
  [[ ${status} == 0 && "${line}" == *" 0 failed"* ]]
}

# Stops the processes in the caller's `pids` (SIGTERM, then waits) and
# empties it.
stop_processes() {
  if ((${#pids[@]} > 0)); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait "${pids[@]}" 2>/dev/null || true
    pids=()
  fi
}

# The main job: pong, ping and aos_timing_report_streamer --application=ping
# on a private --shm_base; reports stream for --duration seconds (default 10)
# or until Ctrl-C, then the accumulated summary prints and every process and
# shared memory file is cleaned up. Extra arguments go to the streamer.
run_main_job() {
  # --log=FILE.mcap is ours: aos_logger records the run into FILE.
  local log_file="" args=()
  local arg
  for arg in "$@"; do
    case "${arg}" in
      --log=?*) log_file="${arg#--log=}" ;;
      --log | --log=)
        log "--log needs a file: --log=FILE.mcap"
        return 1
        ;;
      *) args+=("${arg}") ;;
    esac
  done
  [[ -n "${log_file}" && "${log_file}" != /* ]] && log_file="${CALLER_DIR}/${log_file}"
  set -- "${args[@]+"${args[@]}"}"
  bazel_cmd build //examples:ping //examples:pong \
    //aos/tools:aos_timing_report_streamer //aos/events/logging:aos_logger
  local base config status=0
  base="$(mktemp -d /dev/shm/aos_pingpong.XXXXXX)"
  config="bazel-bin/examples/pingpong_config.json"
  local pids=()
  cleanup() {
    stop_processes
    rm -rf "${base}"
  }
  trap cleanup EXIT
  # Ctrl-C reaches the streamer, which prints its summary; we clean up after.
  trap ':' INT TERM
  if [[ -n "${log_file}" ]]; then
    # Started first, so it records ping and pong from their first message.
    bazel-bin/aos/events/logging/aos_logger --config="${config}" \
      --shm_base="${base}" --log_file="${log_file}" &
    pids+=($!)
  fi
  log "starting pong and ping (shared memory in ${base})"
  bazel-bin/examples/pong --config="${config}" --shm_base="${base}" &
  pids+=($!)
  # ping's summary goes to stderr: stdout is the streamer's alone, so
  # `run --format=json > file` holds JSON lines only.
  bazel-bin/examples/ping --config="${config}" --shm_base="${base}" >&2 &
  pids+=($!)
  log "streaming ping's timing reports; Ctrl-C to stop early"
  bazel-bin/aos/tools/aos_timing_report_streamer --config="${config}" \
    --shm_base="${base}" --application=ping --duration=10 "$@" || status=$?
  cleanup
  trap - EXIT INT TERM
  return "${status}"
}

# The main job across two nodes (examples/multinode_pingpong.json): pi1 runs
# ping and its message bridge, pi2 runs pong and its bridge, each on its own
# --shm_base; as root each node is a network namespace joined by a veth pair
# (tools/netns_pair.sh), otherwise both bridges talk over loopback. The
# bridges run with DDS Security: a test CA and both nodes' certificates are
# made for the run (tools/dds_security/make_test_ca.sh) and removed after.
# One streamer on pi1 shows every node's timing reports (pong's forwarded
# from pi2) and what pi1's bridge measures of the network. Extra arguments
# go to the streamer.
run_multinode_job() {
  bazel_cmd build //examples:ping //examples:pong \
    //aos/tools:aos_timing_report_streamer //aos/network:message_bridge \
    //aos/tools:aos_dump //examples:multinode_pingpong_config
  local config="bazel-bin/examples/multinode_pingpong_config.json"
  local bin="bazel-bin"
  local base1 base2 certs status=0 netns="" domain
  base1="$(mktemp -d /dev/shm/aos_pi1.XXXXXX)"
  base2="$(mktemp -d /dev/shm/aos_pi2.XXXXXX)"
  certs="$(mktemp -d "${TMPDIR:-/tmp}/aos_dds_security.XXXXXX")"
  # A DDS domain of our own, so that other runs on this machine stay apart;
  # at most 101, so DDS's ports (7400 + 250 x domain) stay below the
  # ephemeral ports.
  domain=$((1 + RANDOM % 100))
  local in1=() in2=() interface1=lo interface2=lo
  if [[ "$(id -u)" == 0 ]] && tools/netns_pair.sh up aosrun 2>/dev/null; then
    netns=aosrun
    in1=(ip netns exec aosrun1)
    in2=(ip netns exec aosrun2)
    interface1=aosrun1v
    interface2=aosrun2v
    log "pi1 and pi2 are network namespaces aosrun1 and aosrun2 (veth)"
  else
    log "not root (or no ip netns): both nodes on loopback"
  fi
  local pids=()
  cleanup() {
    stop_processes
    [[ -n "${netns}" ]] && tools/netns_pair.sh down "${netns}"
    rm -rf "${base1}" "${base2}" "${certs}"
  }
  trap cleanup EXIT
  trap ':' INT TERM
  tools/dds_security/make_test_ca.sh "${certs}/ca" pi1 pi2 || return 1
  log "DDS Security on: the bridges authenticate with a test CA made for this run (${certs}/ca)"
  local common=(--config="${config}")
  "${in1[@]}" "${bin}/aos/network/message_bridge" "${common[@]}" --node=pi1 \
    --shm_base="${base1}" --dds_domain="${domain}" \
    --dds_interface="${interface1}" --dds_security="${certs}/ca" >&2 &
  pids+=($!)
  "${in2[@]}" "${bin}/aos/network/message_bridge" "${common[@]}" --node=pi2 \
    --shm_base="${base2}" --dds_domain="${domain}" \
    --dds_interface="${interface2}" --dds_security="${certs}/ca" >&2 &
  pids+=($!)
  "${in2[@]}" "${bin}/examples/pong" "${common[@]}" --node=pi2 \
    --shm_base="${base2}" >&2 &
  pids+=($!)
  # Ping starts once the bridges have found each other (pi1's bridge says
  # pi2 is CONNECTED: DDS discovery and the security handshake done), so its
  # first pings are not answered late.
  if ! grep -q -m 1 '"CONNECTED"' < <(timeout 60 "${bin}/aos/tools/aos_dump" \
    "${common[@]}" --node=pi1 --shm_base="${base1}" /pi1/aos \
    aos.message_bridge.ServerStatistics 2>/dev/null); then
    log "the bridges did not connect within 60 s; starting ping anyway"
  fi
  "${in1[@]}" "${bin}/examples/ping" "${common[@]}" --node=pi1 \
    --shm_base="${base1}" >&2 &
  pids+=($!)
  log "streaming every node's timing reports on pi1; Ctrl-C to stop early"
  "${bin}/aos/tools/aos_timing_report_streamer" "${common[@]}" \
    --shm_base="${base1}" --duration=10 "$@" || status=$?
  cleanup
  trap - EXIT INT TERM
  return "${status}"
}

main() {
  local command="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "${command}" in
    run)
      install_packages
      if [[ "${1:-}" == --multinode ]]; then
        shift
        run_multinode_job "$@"
      else
        run_main_job "$@"
      fi
      ;;
    test) install_packages && install_npm_packages && run_tests "$@" ;;
    build) install_packages && bazel_cmd build //... "$@" ;;
    install) install_packages && install_npm_packages ;;
    bazel)
      install_packages
      if [[ "${1:-}" == test || "${1:-}" == coverage ]]; then
        install_npm_packages
      fi
      bazel "$@"
      ;;
    "" | -h | --help | help)
      sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      ;;
    *)
      log "unknown command '${command}'; try: tools/aos.sh run | test | build | install | bazel ARGS"
      exit 1
      ;;
  esac
}

main "$@"
