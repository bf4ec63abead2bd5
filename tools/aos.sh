#!/bin/bash
# The one entry point: installs what aos needs from Debian, then runs Bazel.
#
#   tools/aos.sh run      the main job: ping + pong + the streamer (README.md)
#                         --log=FILE.mcap also records the run (docs/logging.md)
#   tools/aos.sh test     every test; ends with "N passed, N failed"
#   tools/aos.sh build    bazel build //...
#   tools/aos.sh install  only install the Debian packages
#   tools/aos.sh bazel ARGS...   any other Bazel command, after installing
#
# Packages are installed only when missing (apt-get update first, then
# apt-get install -y), so a second run does no network traffic at all.
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
  libcpp-httplib-dev
  # promtool checks the metrics in a test.
  prometheus
  # Tests parse our JSON with a strict parser.
  python3
  # The message bridge (aos/network) and its benchmark baseline, ddsperf;
  # multi-node tests and runs join network namespaces with veth pairs.
  cyclonedds-dev
  cyclonedds-tools
  iproute2
  # MCAP logs (aos/events/logging): chunk compression and CRC-32, and Node
  # for the test that reads our logs with the MCAP project's own reader.
  libzstd-dev
  liblz4-dev
  zlib1g-dev
  nodejs
  npm
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
    install_npm_packages
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
  install_npm_packages
}

# The npm packages a test reads our MCAP logs with (the MCAP project's own
# TypeScript reader), pinned by aos/events/logging/mcap_check/package-lock.json
# and installed next to it (node_modules is ignored by git). Only when the
# lock file changed since the last install: a second run does no network
# traffic.
readonly NPM_DIR="${ROOT}/aos/events/logging/mcap_check"
install_npm_packages() {
  local stamp="${NPM_DIR}/node_modules/.aos-installed-lock"
  if [[ -f "${stamp}" ]] && cmp -s "${stamp}" "${NPM_DIR}/package-lock.json"; then
    return 0
  fi
  log "installing the npm packages of ${NPM_DIR#"${ROOT}"/} (npm ci)"
  (cd "${NPM_DIR}" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null)
  cp "${NPM_DIR}/package-lock.json" "${stamp}"
}

bazel_cmd() {
  local extra=()
  if [[ ! -t 2 ]]; then extra=(--color=no --curses=no); fi
  bazel "$1" "${extra[@]}" "${@:2}"
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
    if ((${#pids[@]} > 0)); then
      kill -TERM "${pids[@]}" 2>/dev/null || true
      wait "${pids[@]}" 2>/dev/null || true
      pids=()
    fi
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

main() {
  local command="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "${command}" in
    run) install_packages && run_main_job "$@" ;;
    test) install_packages && run_tests "$@" ;;
    build) install_packages && bazel_cmd build //... "$@" ;;
    install) install_packages ;;
    bazel) install_packages && bazel "$@" ;;
    "" | -h | --help | help)
      sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
      ;;
    *)
      log "unknown command '${command}'; try: tools/aos.sh run | test | build | install | bazel ARGS"
      exit 1
      ;;
  esac
}

main "$@"
