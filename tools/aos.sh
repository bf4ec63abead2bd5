#!/bin/bash
# The one entry point: installs what aos needs from Debian, then runs Bazel.
#
#   tools/aos.sh run      the main job: ping + pong + the streamer (README.md)
#                         --log=FILE.mcap also records the run (docs/logging.md)
#                         --trace_wakeup_threshold_us=N snapshots what every
#                         loop did around each late wakeup, into --trace_dir
#                         (default ./aos_traces; docs/tracing.md); as root,
#                         --trace_sched_switch adds what the kernel ran on
#                         the loops' CPUs
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
  # ThreadSanitizer's runtime, for bazel test --config=tsan (g++ pulls it in
  # already through libgcc-12-dev; named so that stays true).
  libtsan2
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
  # tools/bench/ipc.sh runs iceoryx (iox-roudi and its libraries) beside ours.
  iceoryx
  libiceoryx-posh-dev
  libiceoryx-hoofs-dev
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
  # LTTng-UST tracepoints (aos/tracing/lttng): their headers and provider
  # library, the session daemon and lttng, and babeltrace2 to read traces.
  liblttng-ust-dev
  lttng-tools
  babeltrace2
)

log() { echo "aos: $*" >&2; }

# The comment block at the top of this file, whatever its length.
usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' \
    "${BASH_SOURCE[0]}"
}

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

# The npm packages tests read our outputs with: the MCAP project's own
# TypeScript reader for logs (aos/events/logging/mcap_check), TracerBench's
# trace event model for flight recorder snapshots (aos/tracing/trace_check),
# each pinned by the package-lock.json of its directory and installed next
# to it (node_modules is ignored by git). Only for test, install and `bazel
# test` (run and build need no registry), and only when a lock file changed
# since the last install: a second run does no network traffic. Without a
# registry it says so in one line and the tests run on (mcap_check_test and
# trace_check_test then fail naming what is missing).
readonly NPM_DIRS=("${ROOT}/aos/events/logging/mcap_check" "${ROOT}/aos/tracing/trace_check")
install_npm_packages() {
  local dir
  for dir in "${NPM_DIRS[@]}"; do install_npm_packages_in "${dir}"; done
}
install_npm_packages_in() {
  local npm_dir="$1"
  local stamp="${npm_dir}/node_modules/.aos-installed-lock"
  if [[ -f "${stamp}" ]] && cmp -s "${stamp}" "${npm_dir}/package-lock.json"; then
    return 0
  fi
  log "installing the npm packages of ${npm_dir#"${ROOT}"/} (npm ci)"
  local errors
  errors="$(mktemp)"
  if ! (cd "${npm_dir}" && npm ci --no-audit --no-fund --ignore-scripts \
    --loglevel=error >/dev/null 2>"${errors}"); then
    log "npm ci failed (no npm registry?); only the test reading with ${npm_dir#"${ROOT}"/} needs it: $(grep -m 1 -i 'err' "${errors}" || tail -n 1 "${errors}")"
    rm -f "${errors}"
    return 0
  fi
  rm -f "${errors}"
  cp "${npm_dir}/package-lock.json" "${stamp}"
}

bazel_cmd() {
  local extra=()
  if [[ ! -t 2 ]]; then extra=(--color=no --curses=no); fi
  bazel "$1" "${extra[@]}" "${@:2}"
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
  # "N passed, N failed": every test case, from the targets' googletest XML;
  # what failed without results and what was skipped, said on stderr.
  local line
  line="$(python3 tools/test_summary.py "${output}")"
  rm -f "${output}"
  echo "${line}"
  [[ ${status} == 0 && "${line}" == *" 0 failed"* ]]
}

# True while process $1 (a child of ours) runs: not gone, not a zombie.
running() {
  local state
  state="$(sed -E 's/^.*\) //' "/proc/$1/stat" 2>/dev/null | cut -d ' ' -f 1)"
  [[ -n "${state}" && "${state}" != Z ]]
}

# run's arguments, sorted by the program that takes them: the caller
# declares log_file, ping_args, pong_args and streamer_args. --log=FILE is
# ours (aos_logger's --log_file); ping's rate and mode (--sleep_ms,
# --sleep_us, --phased_loop) go to ping; the realtime settings (--priority,
# --affinity, --cpu_dma_latency_us, --cpu_dma_latency_scope, --busy_poll_us,
# --idle_poll, --timer_anticipation_us) and the flight recorder's (--trace_*)
# to ping and pong; --trace_dir=DIR and --trace_sched_switch are ours
# (aos_trace record's --out and --sched_switch, single node); everything else
# to the streamer. The caller declares trace_dir and trace_sched too.
readonly RUN_ROUTING="run passes --sleep_ms, --sleep_us and --phased_loop to ping; --priority, --affinity, --cpu_dma_latency_*, --busy_poll_us, --idle_poll, --timer_anticipation_us and --trace_* to ping and pong; --log to aos_logger; --trace_dir and --trace_sched_switch to aos_trace record; everything else to aos_timing_report_streamer (docs/pingpong.md)"
split_run_args() {
  local arg
  for arg in "$@"; do
    case "${arg}" in
      --log=?*) log_file="${arg#--log=}" ;;
      --trace_dir=?*) trace_dir="${arg#--trace_dir=}" ;;
      --trace_sched_switch) trace_sched="--sched_switch" ;;
      --log | --log=)
        log "--log needs a file: --log=FILE.mcap"
        return 1
        ;;
      --sleep_ms=* | --sleep_us=* | --phased_loop | --phased_loop=* | --nophased_loop)
        ping_args+=("${arg}")
        ;;
      --priority=* | --affinity=* | --cpu_dma_latency_us=* | --cpu_dma_latency_scope=* | \
        --busy_poll_us=* | --idle_poll | --idle_poll=* | --noidle_poll | \
        --timer_anticipation_us=* | \
        --trace_ring_events=* | --trace_wakeup_threshold_us=* | \
        --trace_handler_threshold_us=* | --trace_on_missed_cycles* | \
        --trace_on_lost_messages* | --trace_on_path_deadline* | --notrace_on_*)
        ping_args+=("${arg}")
        pong_args+=("${arg}")
        ;;
      *) streamer_args+=("${arg}") ;;
    esac
  done
  # A trigger asks for snapshots: they go to ./aos_traces unless told.
  if [[ -z "${trace_dir}" ]] &&
    [[ " ${ping_args[*]+"${ping_args[*]}"}" =~ \ --trace_(wakeup|handler|on_) ]]; then
    trace_dir="aos_traces"
  fi
  if [[ -n "${trace_sched}" ]]; then
    if [[ -z "${trace_dir}" ]]; then
      log "--trace_sched_switch adds the kernel's switches to snapshots: give a trigger too (--trace_wakeup_threshold_us=N); nothing was run"
      return 1
    fi
    if [[ "$(id -u)" != 0 ]]; then
      log "--trace_sched_switch needs root (it makes a tracefs instance); nothing was run"
      return 1
    fi
  fi
  if [[ -n "${trace_dir}" ]]; then
    [[ "${trace_dir}" != /* ]] && trace_dir="${CALLER_DIR}/${trace_dir}"
    # Checked before anything is built, as --log is.
    if ! mkdir -p "${trace_dir}" 2>/dev/null || [[ ! -w "${trace_dir}" ]]; then
      log "--trace_dir=${trace_dir}: cannot write there; nothing was run"
      return 1
    fi
  fi
  if [[ -n "${log_file}" ]]; then
    [[ "${log_file}" != /* ]] && log_file="${CALLER_DIR}/${log_file}"
    # Checked before anything is built, so that a run that cannot be
    # recorded does not run.
    local dir
    dir="$(dirname "${log_file}")"
    if [[ ! -d "${dir}" ]]; then
      log "--log=${log_file}: there is no directory ${dir}; nothing was run"
      return 1
    fi
    if [[ ! -w "${dir}" ]]; then
      log "--log=${log_file}: cannot write in ${dir}; nothing was run"
      return 1
    fi
  fi
}

# Checks the flags given to program $1 (a path) as gflags parses them
# (`--version` parses every flag, then only prints the name): a flag it
# does not know, or a value it cannot parse, is one line naming the
# program, then exit 1.
check_flags() {
  local program="$1" error
  shift
  if ! error="$("${program}" "$@" --version 2>&1 >/dev/null)"; then
    log "$(basename "${program}") refused its arguments: ${error//$'\n'/; }"
    log "${RUN_ROUTING}"
    return 1
  fi
}

# The figures ping's summary JSON $1 has at $2 ("p50" of "timer_wakeup_us"),
# or nothing.
json_figure() {
  python3 - "$@" <<'PY' 2>/dev/null || true
import json, sys
try:
    value = json.load(open(sys.argv[1]))
    for key in sys.argv[2:]:
        value = value[key]
    if value is not None:
        print(value)
except (OSError, ValueError, KeyError, TypeError):
    pass
PY
}

# The machine's idle regime, from its cpuidle driver, in one line; $1, if
# given, is what waking an idle CPU costs here (cyclictest's p50, us).
idle_regime() {
  local driver cost=""
  driver="$(cat /sys/devices/system/cpu/cpuidle/current_driver 2>/dev/null || true)"
  [[ -n "${1:-}" ]] && cost="; waking one costs about ${1} us here (cyclictest's p50)"
  case "${driver:-none}" in
    none)
      echo "idle CPUs halt (cpuidle driver ${driver:-none})${cost}, and no CPU wakeup limit shortens that"
      ;;
    haltpoll)
      echo "idle vCPUs poll, then halt (cpuidle driver haltpoll)${cost}; the 0 us CPU wakeup limit ping and cyclictest hold (as root) keeps them polling"
      ;;
    *)
      echo "idle CPUs enter sleep states (cpuidle driver ${driver})${cost}; the 0 us CPU wakeup limit ping and cyclictest hold (as root) keeps them out"
      ;;
  esac
}

# Know your machine: after the run, cyclictest for 5 s at ping's rate and
# priority; one line on the machine's idle regime (idle_regime), then the
# last line of the run, comparing cyclictest's p50/p99 with ping's timer's
# (from ping's summary JSON $1). Only says; never fails the run.
compare_with_machine() {
  local summary="$1" priority=5 interval_us=10000 sleep_ms="" sleep_us="" arg
  local affinity=""
  for arg in "${ping_args[@]+"${ping_args[@]}"}"; do
    case "${arg}" in
      --affinity=*) affinity="${arg#--affinity=}" ;;
      --priority=*) priority="${arg#--priority=}" ;;
      --sleep_ms=*) sleep_ms="${arg#--sleep_ms=}" ;;
      --sleep_us=*) sleep_us="${arg#--sleep_us=}" ;;
    esac
  done
  if [[ "${sleep_us}" =~ ^[0-9]+$ ]] && ((sleep_us > 0)); then
    interval_us="${sleep_us}"
  elif [[ "${sleep_ms}" =~ ^[0-9]+$ ]] && ((sleep_ms > 0)); then
    interval_us=$((sleep_ms * 1000))
  fi
  [[ "${priority}" =~ ^[0-9]+$ ]] || priority=5
  local p50 p99
  p50="$(json_figure "${summary}" timer_wakeup_us p50)"
  p99="$(json_figure "${summary}" timer_wakeup_us p99)"
  [[ -n "${p50}" && -n "${p99}" ]] || return 0
  if ! command -v cyclictest >/dev/null; then
    log "$(idle_regime)"
    log "ping's timer: p50 ${p50} us, p99 ${p99} us; to see what this machine itself does at that rate, install cyclictest (apt-get install rt-tests, or ./tools/aos.sh install)"
    return 0
  fi
  local json="${work}/cyclictest.json" policy="SCHED_FIFO ${priority}"
  ((priority == 0)) && policy="normal priority"
  local ct=(cyclictest -q -D 5 -t 1 -i "${interval_us}" -h 100000
    --json="${json}")
  # On ping's CPU, where ping was pinned to one.
  [[ "${affinity}" =~ ^[0-9]+$ ]] && ct+=(-a "${affinity}")
  # Locking memory needs root (or CAP_IPC_LOCK), as realtime priority does.
  [[ "$(id -u)" == 0 ]] && ct+=(-m)
  log "cyclictest for 5 s at ping's rate and priority, to compare ..."
  if ! "${ct[@]}" -p "${priority}" >/dev/null 2>"${work}/cyclictest.err"; then
    # Without permission for realtime priority ping ran at normal priority
    # too (it warned): compare like with like.
    policy="normal priority (cyclictest was refused ${policy}, as ping was)"
    local ct_status=0
    "${ct[@]}" -p 0 >/dev/null 2>"${work}/cyclictest.err" || ct_status=$?
    if ((ct_status != 0)) || [[ ! -s "${json}" ]]; then
      log "$(idle_regime)"
      log "cyclictest failed (status ${ct_status}: $(head -n 1 "${work}/cyclictest.err")); ping's timer: p50 ${p50} us, p99 ${p99} us"
      return 0
    fi
  fi
  local lines
  lines="$(python3 - "${json}" "${p50}" "${p99}" "${interval_us}" "${policy}" <<'PY' || true
import json, sys
path, p50, p99, interval_us, policy = sys.argv[1:]
thread = json.load(open(path))["thread"]["0"]
classes = sorted((int(us), int(n)) for us, n in thread["histogram"].items())
cycles = int(thread["cycles"])
def percentile(p):
    # cyclictest truncates to whole us: a class is read at its middle.
    need, seen = p / 100 * cycles, 0
    for us, n in classes:
        seen += n
        if seen >= need:
            return us + 0.5
    return None  # Beyond the histogram (100 ms).
def text(value):
    return ">100000" if value is None else f"{value:.1f}"
def ratio(ours, theirs):
    return "" if theirs is None or theirs <= 0 else f" ({ours / theirs:.2f}x)"
c50, c99 = percentile(50), percentile(99)
rate = 1e6 / float(interval_us)
# First cyclictest's p50 alone (for the idle regime's line), then the line.
print("" if c50 is None else f"{c50:.0f}")
print(f"this machine at {rate:g} Hz, {policy}: cyclictest (5 s) wakes p50 "
      f"{text(c50)} us, p99 {text(c99)} us; ping's timer p50 {float(p50):.1f} "
      f"us{ratio(float(p50), c50)}, p99 {float(p99):.1f} us"
      f"{ratio(float(p99), c99)} of that")
PY
)"
  [[ -n "${lines}" ]] || return 0
  log "$(idle_regime "$(head -n 1 <<<"${lines}")")"
  log "$(tail -n 1 <<<"${lines}")"
}

# One application of a run's node config as JSON: name $1, binary $2,
# autostart $3 (true or false), arguments the rest (passed exactly: no
# shell quoting reaches them).
application_json() {
  python3 -c 'import json, sys
name, binary, autostart = sys.argv[1:4]
application = {"name": name, "executable_name": binary,
               "autostart": autostart == "true", "args": sys.argv[4:]}
# A recorder that fails is not restarted: the recording is what failed.
if name == "aos_logger":
    application["autorestart"] = False
print(json.dumps(application))' "$@"
}

# started_ok AOS_STARTER... -- NAME...: each application NAME runs, as the
# starter's status says (aos_starter status); else says which did not, and
# why, and returns 1.
started_ok() {
  local aos_starter=() name row ok=0
  while [[ "$1" != -- ]]; do aos_starter+=("$1"); shift; done
  shift
  local status
  status="$("${aos_starter[@]}" status 2>&1)" || {
    log "${status}"
    return 1
  }
  for name in "$@"; do
    row="$(awk -v name="${name}" '$1 == name {$1 = $1; print}' <<<"${status}")"
    if [[ "$(awk '{print $2}' <<<"${row}")" != RUNNING ]]; then
      log "${name} is not running: ${row:-not in the status of the starter} (its message is above)"
      ok=1
    fi
  done
  return "${ok}"
}

# run_config FILE IMPORT APPLICATION_JSON...: writes the node config of a
# run: the flattened config IMPORT (an absolute path) and these
# applications (application_json), for starterd to run.
run_config() {
  local file="$1" import="$2" applications
  shift 2
  applications="$(IFS=,; echo "$*")"
  printf '{"imports": [%s], "applications": [%s]}\n' \
    "$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "${import}")" \
    "${applications}" >"${file}"
}

# Unless run was given --affinity: ping and pong both run on the last CPU
# this shell may use. Two realtime loops that wake each other wake fastest
# on one CPU wherever idle CPUs halt (a VM whose cpuidle driver is none): a
# woken SCHED_FIFO thread goes to an idle CPU, and waking a halted one costs
# the hypervisor's exit (docs/event_loop.md, "Where idle CPUs halt"). It
# costs no CPU time; --affinity= (empty) lets them float.
share_one_cpu() {
  local arg cpu
  for arg in "${ping_args[@]+"${ping_args[@]}"}"; do
    [[ "${arg}" == --affinity=* ]] && return 0
  done
  cpu="$(python3 -c 'import os; print(max(os.sched_getaffinity(0)))')"
  ping_args+=("--affinity=${cpu}")
  pong_args+=("--affinity=${cpu}")
  log "ping and pong share CPU ${cpu} (--affinity=${cpu}; give --affinity= to let them float)"
}

# Ctrl-C (or TERM) while a run is still installing, building or setting up
# stops it there, as Ctrl-C during the streaming does ("Ctrl-C to stop
# early"): one line, exit 0 (nothing was started yet). The run's own traps
# replace this one once it has something to clean up.
stop_on_early_interrupt() {
  trap 'log "stopped before anything ran, as asked; nothing was measured"; exit 0' INT TERM
}

# The main job: pong, ping and aos_timing_report_streamer --application=ping
# on a private --shm_base. A node starter (starterd, docs/starter.md) runs
# the applications from a node config written for the run: pong (and
# aos_logger for --log) at once, then ping by command once pong reports
# (aos_starter start --until_reporting), so no ping goes unanswered while
# pong starts. The streamer shows ping's reports for --duration seconds
# (default 10) or until Ctrl-C (the starter runs in a session of its own,
# so Ctrl-C reaches the streamer alone); then the starter stops ping,
# which prints its summary, then pong; then the comparison with
# cyclictest. Every process and shared memory file is cleaned up.
# Arguments: split_run_args. Fails when a program could not start, when
# ping got no pong, or when the recording failed.
run_main_job() {
  local log_file="" trace_dir="" trace_sched="" ping_args=() pong_args=()
  local streamer_args=()
  split_run_args "$@" || return 1
  share_one_cpu
  local targets=(//examples:ping //examples:pong
    //aos/tools:aos_timing_report_streamer //aos/starter:starterd
    //aos/starter:aos_starter)
  [[ -n "${log_file}" ]] && targets+=(//aos/events/logging:aos_logger)
  [[ -n "${trace_dir}" ]] && targets+=(//aos/tracing:aos_trace)
  bazel_cmd build "${targets[@]}"
  local base work status=0 bin starter=""
  bin="$(pwd)/bazel-bin"
  # Quiet: glog's "Terminated, exiting" after every summary says nothing.
  local quiet=(--minloglevel=1)
  check_flags "${bin}/examples/ping" "${ping_args[@]+"${ping_args[@]}"}" || return 1
  check_flags "${bin}/aos/tools/aos_timing_report_streamer" \
    "${streamer_args[@]+"${streamer_args[@]}"}" || return 1
  base="$(mktemp -d /dev/shm/aos_pingpong.XXXXXX)"
  work="$(mktemp -d "${TMPDIR:-/tmp}/aos_run.XXXXXX")"
  local config="${work}/node.json"
  # Snapshots newer than this are the run's.
  touch "${work}/started"
  cleanup() {
    if [[ -n "${starter}" ]]; then
      kill -TERM "${starter}" 2>/dev/null || true
      wait "${starter}" 2>/dev/null || true
      starter=""
    fi
    rm -rf "${base}" "${work}"
  }
  trap cleanup EXIT
  # Ctrl-C reaches the streamer (or aos_starter, while ping starts); we go
  # on after.
  local interrupted=""
  trap 'interrupted=1' INT TERM
  trap 'exit 129' HUP
  local common=("${quiet[@]}" --config="${config}" --shm_base="${base}")
  local applications=()
  if [[ -n "${log_file}" ]]; then
    # Started with pong, before ping: it records ping from its first
    # message.
    applications+=("$(application_json aos_logger \
      "${bin}/aos/events/logging/aos_logger" true "${common[@]}" \
      --log_file="${log_file}")")
  fi
  if [[ -n "${trace_dir}" ]]; then
    # The node's flight recorder: a snapshot of every loop's ring around
    # each trigger of ping's or pong's --trace_* thresholds.
    applications+=("$(application_json aos_trace \
      "${bin}/aos/tracing/aos_trace" true "${common[@]}" \
      ${trace_sched:+"${trace_sched}"} record --out="${trace_dir}")")
  fi
  applications+=("$(application_json pong "${bin}/examples/pong" true \
    "${common[@]}" "${pong_args[@]+"${pong_args[@]}"}")")
  applications+=("$(application_json ping "${bin}/examples/ping" false \
    "${common[@]}" --summary_json="${work}/ping.json" \
    "${ping_args[@]+"${ping_args[@]}"}")")
  run_config "${config}" "${bin}/examples/pingpong_config.json" \
    "${applications[@]}"
  log "starting pong, then ping once pong reports, under starterd (shared memory in ${base}); streaming ping's timing reports; Ctrl-C to stop early"
  setsid "${bin}/aos/starter/starterd" "${common[@]}" \
    --statuses="${work}/statuses" &
  starter=$!
  local aos_starter=("${bin}/aos/starter/aos_starter" "${common[@]}"
    --timeout_s=60)
  local recorder=()
  [[ -n "${log_file}" ]] && recorder+=(aos_logger)
  [[ -n "${trace_dir}" ]] && recorder+=(aos_trace)
  if "${aos_starter[@]}" --until_reporting start pong >/dev/null &&
    started_ok "${aos_starter[@]}" -- "${recorder[@]+"${recorder[@]}"}" &&
    "${aos_starter[@]}" --until_reporting start ping >/dev/null; then
    "${bin}/aos/tools/aos_timing_report_streamer" "${common[@]}" \
      --application=ping --duration=10 \
      "${streamer_args[@]+"${streamer_args[@]}"}" || status=$?
    # Ctrl-C ended it, as asked.
    ((status == 130)) && status=0
  elif [[ -n "${interrupted}" ]]; then
    log "stopped before ping ran, as asked; nothing was measured"
  else
    log "nothing was measured"
    status=1
  fi
  kill -TERM "${starter}" 2>/dev/null
  wait "${starter}" 2>/dev/null
  starter=""
  finish_launched_run "${work}" "${status}" || status=$?
  cleanup
  trap - EXIT INT TERM HUP
  return "${status}"
}

# After the applications were stopped (the run's status so far $2, what
# failed said), with the starter's --statuses and ping's --summary_json in
# directory $1: what the statuses mean for this run (no pong, an incomplete recording), then the
# comparison with the machine. Returns the run's status. Uses the caller's
# log_file and ping_args.
finish_launched_run() {
  local work="$1" status="$2" ping_status logger_status
  ping_status="$(awk '$1 == "ping" {print $2}' "${work}/statuses" 2>/dev/null)"
  logger_status="$(awk '$1 == "aos_logger" {print $2}' "${work}/statuses" 2>/dev/null)"
  if [[ -n "${logger_status}" && "${logger_status}" != 0 ]]; then
    log "--log=${log_file}: aos_logger failed with status ${logger_status} (its message is above); the recording is incomplete or missing"
    ((status == 0)) && status=1
  fi
  # ping never ran, or failed: the starter said so, and there is no summary.
  [[ "${ping_status}" == 0 && -s "${work}/ping.json" ]] || return "${status}"
  if [[ "$(json_figure "${work}/ping.json" pongs)" == 0 ]]; then
    log "ping got no pong: pong did not answer (its messages are above)"
    ((status == 0)) && status=1
  fi
  compare_with_machine "${work}/ping.json"
  if [[ -n "${trace_dir:-}" ]]; then
    local snapshots
    snapshots="$(find "${trace_dir}" -maxdepth 1 -name 'aos_trace.*.json' -newer "${work}/started" | wc -l)"
    log "flight recorder: ${snapshots} snapshot(s) of this run in ${trace_dir} (bazel-bin/aos/tracing/aos_trace list ${trace_dir}; open one in Perfetto's trace viewer)"
  fi
  return "${status}"
}

# The main job across two nodes (examples/multinode_pingpong.json): pi1 runs
# ping and its message bridge, pi2 runs pong and its bridge, each on its own
# --shm_base; as root each node is a network namespace joined by a veth pair
# (tools/netns_pair.sh), otherwise both bridges talk over loopback. The
# bridges run with DDS Security: a test CA and both nodes' certificates are
# made for the run (tools/dds_security/make_test_ca.sh) and removed after.
# One streamer on pi1 shows every node's timing reports (pong's forwarded
# from pi2) and what pi1's bridge measures of the network. --log=FILE
# records pi1 (what ping's node can read: its own channels and those
# forwarded from pi2). Arguments, ordering and failures as run_main_job.
run_multinode_job() {
  local log_file="" trace_dir="" trace_sched="" ping_args=() pong_args=()
  local streamer_args=()
  split_run_args "$@" || return 1
  local targets=(//examples:ping //examples:pong
    //aos/tools:aos_timing_report_streamer //aos/network:message_bridge
    //aos/tools:aos_dump //examples:multinode_pingpong_config
    //aos/starter:starterd //aos/starter:aos_starter)
  [[ -n "${log_file}" ]] && targets+=(//aos/events/logging:aos_logger)
  [[ -n "${trace_dir}" ]] && targets+=(//aos/tracing:aos_trace)
  bazel_cmd build "${targets[@]}"
  local bin
  bin="$(pwd)/bazel-bin"
  local channels="${bin}/examples/multinode_pingpong_config.json"
  local quiet=(--minloglevel=1)
  check_flags "${bin}/examples/ping" "${ping_args[@]+"${ping_args[@]}"}" || return 1
  check_flags "${bin}/aos/tools/aos_timing_report_streamer" \
    "${streamer_args[@]+"${streamer_args[@]}"}" || return 1
  local base1 base2 certs work status=0 netns="" domain
  base1="$(mktemp -d /dev/shm/aos_pi1.XXXXXX)"
  base2="$(mktemp -d /dev/shm/aos_pi2.XXXXXX)"
  certs="$(mktemp -d "${TMPDIR:-/tmp}/aos_dds_security.XXXXXX")"
  work="$(mktemp -d "${TMPDIR:-/tmp}/aos_run.XXXXXX")"
  # A DDS domain of our own, so that other runs on this machine stay apart;
  # at most 101, so DDS's ports (7400 + 250 x domain) stay below the
  # ephemeral ports.
  domain=$((1 + RANDOM % 100))
  local in1=() in2=() interface1=lo interface2=lo
  local netns_error=""
  if [[ "$(id -u)" == 0 ]] &&
    netns_error="$(tools/netns_pair.sh up aosrun 2>&1)"; then
    netns=aosrun
    in1=(ip netns exec aosrun1)
    in2=(ip netns exec aosrun2)
    interface1=aosrun1v
    interface2=aosrun2v
    log "pi1 and pi2 are network namespaces aosrun1 and aosrun2 (veth)"
  else
    if [[ "$(id -u)" != 0 ]]; then
      log "not root: both nodes on loopback"
    else
      log "no network namespaces (${netns_error##*$'\n'}): both nodes on loopback"
    fi
  fi
  # Each node's applications are run by a starter of its own
  # (docs/starter.md), inside the node's namespace, in a session of its own
  # so that Ctrl-C reaches only the streamer: pi2's (its bridge, pong) and
  # pi1's (the recorder, its bridge, and ping by command once the bridges
  # are connected).
  local starter1="" starter2=""
  cleanup() {
    local pid
    for pid in ${starter1} ${starter2}; do
      kill -TERM "${pid}" 2>/dev/null || true
      wait "${pid}" 2>/dev/null || true
    done
    starter1="" starter2=""
    [[ -n "${netns}" ]] && tools/netns_pair.sh down "${netns}"
    rm -rf "${base1}" "${base2}" "${certs}" "${work}"
  }
  trap cleanup EXIT
  local interrupted=""
  trap 'interrupted=1' INT TERM
  trap 'exit 129' HUP
  tools/dds_security/make_test_ca.sh "${certs}/ca" pi1 pi2 || return 1
  log "DDS Security on: the bridges authenticate with a test CA made for this run (${certs}/ca)"
  local config1="${work}/pi1.json" config2="${work}/pi2.json"
  local on1=("${quiet[@]}" --config="${config1}" --node=pi1 --shm_base="${base1}")
  local on2=("${quiet[@]}" --config="${config2}" --node=pi2 --shm_base="${base2}")
  local bridge="${bin}/aos/network/message_bridge"
  local bridge_args=(--dds_domain="${domain}" --dds_security="${certs}/ca")
  # Each node's flight recorder, with --trace_dir: a trigger on one node
  # snapshots both (each asks the other through the bridges).
  local pi1_applications=() pi2_applications=()
  if [[ -n "${trace_dir}" ]]; then
    touch "${work}/started"
    local record=(${trace_sched:+"${trace_sched}"} record --out="${trace_dir}")
    pi1_applications+=("$(application_json aos_trace \
      "${bin}/aos/tracing/aos_trace" true "${on1[@]}" "${record[@]}")")
    pi2_applications+=("$(application_json aos_trace \
      "${bin}/aos/tracing/aos_trace" true "${on2[@]}" "${record[@]}")")
  fi
  run_config "${config2}" "${channels}" \
    "$(application_json message_bridge "${bridge}" true "${on2[@]}" \
      "${bridge_args[@]}" --dds_interface="${interface2}")" \
    "${pi2_applications[@]+"${pi2_applications[@]}"}" \
    "$(application_json pong "${bin}/examples/pong" true "${on2[@]}" \
      "${pong_args[@]+"${pong_args[@]}"}")"
  if [[ -n "${log_file}" ]]; then
    pi1_applications+=("$(application_json aos_logger \
      "${bin}/aos/events/logging/aos_logger" true "${on1[@]}" \
      --log_file="${log_file}")")
  fi
  pi1_applications+=(
    "$(application_json message_bridge "${bridge}" true "${on1[@]}" \
      "${bridge_args[@]}" --dds_interface="${interface1}")"
    "$(application_json ping "${bin}/examples/ping" false "${on1[@]}" \
      --summary_json="${work}/ping.json" "${ping_args[@]+"${ping_args[@]}"}")")
  run_config "${config1}" "${channels}" "${pi1_applications[@]}"
  setsid "${in2[@]+"${in2[@]}"}" "${bin}/aos/starter/starterd" "${on2[@]}" \
    --statuses="${work}/pi2_statuses" &
  starter2=$!
  setsid "${in1[@]+"${in1[@]}"}" "${bin}/aos/starter/starterd" "${on1[@]}" \
    --statuses="${work}/statuses" &
  starter1=$!
  # Ping starts once the bridges have found each other (pi1's bridge says
  # pi2 is CONNECTED: DDS discovery and the security handshake done), so its
  # first pings are not answered late.
  # aos_dump is stopped and waited for before going on: killed only by a
  # closed pipe, it could outlive the cleanup and leave pi1's shared memory.
  "${bin}/aos/tools/aos_dump" "${on1[@]}" /pi1/aos \
    aos.message_bridge.ServerStatistics >"${work}/bridge_statistics" 2>/dev/null &
  local dump=$! waited
  for ((waited = 0; waited < 600; ++waited)); do
    grep -q '"CONNECTED"' "${work}/bridge_statistics" && break
    running "${dump}" || break
    sleep 0.1
  done
  kill "${dump}" 2>/dev/null || true
  wait "${dump}" 2>/dev/null || true
  if ! grep -q '"CONNECTED"' "${work}/bridge_statistics"; then
    if ! running "${starter1}" || ! running "${starter2}"; then
      log "a starter ended; nothing was measured"
      cleanup
      trap - EXIT INT TERM HUP
      return 1
    fi
    log "the bridges did not connect within 60 s; starting ping anyway"
  fi
  local recorder=()
  [[ -n "${log_file}" ]] && recorder=(aos_logger)
  [[ -n "${trace_dir}" ]] && recorder+=(aos_trace)
  if started_ok "${bin}/aos/starter/aos_starter" "${on1[@]}" -- \
    "${recorder[@]+"${recorder[@]}"}" &&
    "${bin}/aos/starter/aos_starter" "${on1[@]}" --until_reporting \
    --timeout_s=60 start ping >/dev/null; then
    log "streaming every node's timing reports on pi1; Ctrl-C to stop early"
    "${bin}/aos/tools/aos_timing_report_streamer" "${quiet[@]}" \
      --config="${config1}" --shm_base="${base1}" --duration=10 \
      "${streamer_args[@]+"${streamer_args[@]}"}" || status=$?
    ((status == 130)) && status=0
  elif [[ -n "${interrupted}" ]]; then
    log "stopped before ping ran, as asked; nothing was measured"
  else
    log "nothing was measured"
    status=1
  fi
  # pi1's starter (ping, its bridge, the recorder), then pi2's.
  local pid
  for pid in "${starter1}" "${starter2}"; do
    kill -TERM "${pid}" 2>/dev/null || true
    wait "${pid}" || status=1
  done
  starter1="" starter2=""
  finish_launched_run "${work}" "${status}" || status=$?
  cleanup
  trap - EXIT INT TERM HUP
  return "${status}"
}

main() {
  local command="${1:-}"
  [[ $# -gt 0 ]] && shift
  case "${command}" in
    run)
      stop_on_early_interrupt
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
      usage
      ;;
    *)
      log "unknown command '${command}'; try: tools/aos.sh run | test | build | install | bazel ARGS"
      exit 1
      ;;
  esac
}

main "$@"
