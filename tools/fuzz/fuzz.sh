#!/bin/bash
# Fuzzes one parser of untrusted input with libFuzzer (docs/fuzzing.md):
#   queue          damaged shared-memory queue files (aos/ipc_lib/queue_fuzz.h)
#   json           JSON text against two schemas (aos/fuzz/fuzz_steps.h)
#   timing_report  bytes decoded as a timing report
#   config         configuration files with imports
#   mcap           log files, read as aos_dump --log reads them
#
#   tools/fuzz/fuzz.sh --target=NAME [--cpu_minutes=10] [--jobs=1]
#                      [--build_only] [--binary=PATH] [--merge]
#                      [-- libFuzzer flags]
#
# 1. Installs clang-14 and its runtimes (libFuzzer) from Debian if missing.
# 2. Builds the target's fuzzer with clang, libFuzzer, AddressSanitizer and
#    UndefinedBehaviorSanitizer in a Bazel output base of its own (the
#    normal g++ build's cache is left alone), under /tmp/aos-bazel.lock.
# 3. Runs it outside the lock for --cpu_minutes CPU-minutes in all, split
#    over --jobs processes, from the target's checked-in corpus (which the
#    normal build's tests replay), in a new pid namespace when
#    unshare allows it (so that a bug could never signal a process outside
#    it). An input that crashes, hangs (-timeout=10 s) or reads out of
#    bounds is saved as crash-*/timeout-* in the work directory, which the
#    script prints, and the script exits non-zero.
# --binary=PATH: skip 1 and 2, run a fuzzer built before (--build_only
#    prints where it is).
# --merge: afterwards, minimise what was found into the checked-in corpus.
set -euo pipefail

readonly ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
readonly OUTPUT_BASE="${HOME}/.cache/aos-fuzz-bazel"
readonly PACKAGES=(clang-14 libclang-rt-14-dev)

target=""
cpu_minutes=10
jobs=1
build_only=0
binary=""
merge=0
extra=()
while (($# > 0)); do
  case "$1" in
    --target=*) target="${1#*=}" ;;
    --cpu_minutes=*) cpu_minutes="${1#*=}" ;;
    --jobs=*) jobs="${1#*=}" ;;
    --build_only) build_only=1 ;;
    --binary=*) binary="${1#*=}" ;;
    --merge) merge=1 ;;
    --) shift; extra=("$@"); break ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
case "${target}" in
  queue)
    LABEL=//aos/ipc_lib:queue_fuzzer
    CORPUS="${ROOT}/aos/ipc_lib/testdata/queue_fuzz_corpus"
    ;;
  json | timing_report | config | mcap)
    LABEL="//aos/fuzz:${target}_fuzzer"
    CORPUS="${ROOT}/aos/fuzz/testdata/${target}_corpus"
    ;;
  *)
    echo "fuzz.sh: --target='${target}' is not one of queue, json, timing_report, config, mcap" >&2
    exit 2
    ;;
esac
# The largest input: a log whose configuration embeds a schema is 9 KB.
MAX_LEN=1024
[[ "${target}" == mcap ]] && MAX_LEN=12288
readonly LABEL CORPUS MAX_LEN
if ! [[ "${cpu_minutes}" =~ ^[0-9]+$ && "${cpu_minutes}" -ge 1 ]]; then
  echo "fuzz.sh: --cpu_minutes=${cpu_minutes} is not a whole number >= 1" >&2
  exit 2
fi
if ! [[ "${jobs}" =~ ^[0-9]+$ && "${jobs}" -ge 1 ]]; then
  echo "fuzz.sh: --jobs=${jobs} is not a whole number >= 1" >&2
  exit 2
fi

log() { echo "fuzz ${target}: $*" >&2; }

# Installs clang if needed and builds the fuzzer into ${binary}.
build() {
  missing=()
  for package in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "${package}" 2>/dev/null |
      grep -q "install ok installed" || missing+=("${package}")
  done
  if ((${#missing[@]} > 0)); then
    if [[ "$(id -u)" != 0 ]]; then
      log "missing ${missing[*]}; as root run: apt-get update && apt-get install -y ${missing[*]}"
      exit 1
    fi
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi

  cd "${ROOT}"
  log "building ${LABEL} with clang-14 (output base ${OUTPUT_BASE})"
  local status=0
  # --max_idle_secs: this second Bazel server goes away on its own instead
  # of holding memory. --symlink_prefix=/: no bazel-* links in the
  # workspace, which would otherwise point into this output base (bazel-bin
  # of the g++ build would lead to the fuzzers, and a later "//..." would
  # wander into the other execroot). No vptr and function checks: they need the C++ UBSan
  # runtime, which linking with clang, not clang++, leaves out.
  flock -o /tmp/aos-bazel.lock bazel --output_base="${OUTPUT_BASE}" \
    --max_idle_secs=60 build \
    --repo_env=CC=clang-14 --color=no --curses=no --symlink_prefix=/ \
    --copt=-Wno-error --copt=-fno-omit-frame-pointer \
    --copt=-fsanitize=fuzzer-no-link,address,undefined \
    --copt=-fno-sanitize-recover=undefined --copt=-fno-sanitize=vptr,function \
    --linkopt=-fsanitize=fuzzer,address,undefined \
    "${LABEL}" || status=$?
  ((status == 0)) || exit "${status}"
  local path="${LABEL#//}"
  path="${path/://}"
  binary="$(mktemp -d "/tmp/aos_${target}_fuzz.XXXXXX")/$(basename "${path}")"
  cp "${OUTPUT_BASE}/execroot/aos/bazel-out/k8-opt/bin/${path}" "${binary}"
  log "built ${binary}"
}

if [[ -z "${binary}" ]]; then
  build
  ((build_only)) && exit 0
elif [[ ! -x "${binary}" ]]; then
  log "--binary=${binary} is not an executable file"
  exit 2
fi
readonly BINARY="${binary}"

readonly WORK="$(dirname "${BINARY}")"
mkdir -p "${WORK}/corpus"
rm -f "${WORK}"/fuzz*.log  # An earlier run's, with --binary.
cp "${CORPUS}"/* "${WORK}/corpus/"
namespace=()
if unshare --pid --fork --mount-proc true 2>/dev/null; then
  namespace=(unshare --pid --fork --mount-proc)
else
  log "unshare --pid is not allowed here; running in this pid namespace"
fi
log "fuzzing for ${cpu_minutes} CPU-minutes in ${jobs} job(s); work directory ${WORK}"
# Queue and config files live in memory, in a directory of this run's,
# removed after.
shm_dir="$(mktemp -d "/dev/shm/aos_${target}_fuzz.XXXXXX")"
trap 'rm -rf "${shm_dir}"' EXIT
# The inputs libFuzzer saved as crashing, hanging or leaking, one a line.
findings() {
  find "${WORK}" -maxdepth 1 \( -name 'crash-*' -o -name 'timeout-*' \
    -o -name 'leak-*' \) -print
}
# CPU time of this script's finished children (clock ticks), as the kernel
# counted it.
children_ticks() { awk '{print $16 + $17}' /proc/$$/stat; }
readonly TICKS="$(getconf CLK_TCK)"
readonly WANTED=$((cpu_minutes * 60 * TICKS))
readonly START="$(children_ticks)"
# libFuzzer's -max_total_time is wall time, and on a busy machine a job gets
# less than a CPU: rounds go on, from the corpus so far, until the jobs
# together used the CPU time asked for.
status=0
round=0
while true; do
  used=$(($(children_ticks) - START))
  ((used < WANTED)) || break
  round=$((round + 1))
  seconds=$(((WANTED - used) / TICKS / jobs))
  ((seconds >= 10)) || seconds=10
  run=("${BINARY}" -timeout=10 -rss_limit_mb=2048 -max_len="${MAX_LEN}"
    -max_total_time="${seconds}" -print_final_stats=1
    -artifact_prefix="${WORK}/" "${extra[@]}" "${WORK}/corpus")
  if ((jobs > 1)); then
    run+=(-jobs="${jobs}" -workers="${jobs}")
  fi
  log "round ${round}: ${jobs} x ${seconds} s"
  (cd "${WORK}" && AOS_QUEUE_FUZZ_DIR="${shm_dir}" AOS_FUZZ_DIR="${shm_dir}" \
    "${namespace[@]}" "${run[@]}") \
    >"${WORK}/fuzz.log" 2>&1 || status=$?
  # With --jobs, each job logs to fuzz-<n>.log in the work directory.
  for job_log in "${WORK}"/fuzz.log "${WORK}"/fuzz-*.log; do
    [[ -f "${job_log}" ]] || continue
    grep -E "^#[0-9]+.*DONE" "${job_log}" | tail -1 || true
    grep -E "stat::number_of_executed_units|ERROR|SUMMARY" "${job_log}" || true
  done
  if ((status != 0)) || [[ -n "$(findings)" ]]; then
    break
  fi
done
awk -v t="$(($(children_ticks) - START))" -v hz="${TICKS}" -v r="${round}" \
  'BEGIN { printf "%.1f CPU-minutes used in %d round(s)\n", t / hz / 60, r }' >&2
if [[ -n "$(findings)" ]]; then
  log "FOUND: $(findings | tr '\n' ' ')"
  log "reproduce: ${BINARY} <file>; full log: ${WORK}/fuzz.log"
  exit 1
fi
if ((status != 0)); then
  log "the fuzzer exited with ${status}; see ${WORK}/fuzz.log"
  exit "${status}"
fi
if ((merge)); then
  mkdir -p "${WORK}/merged"
  "${BINARY}" -merge=1 "${WORK}/merged" "${CORPUS}" "${WORK}/corpus" \
    >"${WORK}/merge.log" 2>&1
  rm -f "${CORPUS}"/*
  cp "${WORK}/merged"/* "${CORPUS}/"
  log "checked-in corpus now has $(ls "${CORPUS}" | wc -l) inputs"
fi
log "no crash, hang or out-of-bounds access; corpus in ${WORK}/corpus"
