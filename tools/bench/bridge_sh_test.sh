#!/bin/bash
# tools/bench/bridge.sh's own arguments: --help, --dry-run, and a clear
# refusal of anything else, before it builds or measures anything.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
script="${root}/tools/bench/bridge.sh"

bash "${script}" --help >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "--help exited ${status}"
grep -q 'tools/bench/bridge.sh \[--link=lo|veth|both\] \[--seconds=N\]' \
  "${tmp}/out" || fail "--help does not show the usage: $(cat "${tmp}/out")"
grep -q 'ddsperf' "${tmp}/out" || fail "--help does not say what it compares with"

bash "${script}" --link=lo --seconds=2 --dry-run >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "--dry-run exited ${status}: $(cat "${tmp}/err")"
grep -q 'bridge_bench .*--links=lo --seconds=2 .*--latency_rounds=3' "${tmp}/out" ||
  fail "--dry-run does not show the bench's command: $(cat "${tmp}/out")"
grep -q 'flock -o /tmp/aos-bazel.lock' "${tmp}/out" ||
  fail "--dry-run does not measure under the build lock: $(cat "${tmp}/out")"
grep -q 'build:   flock -o /tmp/aos-bazel.lock' "${tmp}/out" ||
  fail "--dry-run does not build under the build lock: $(cat "${tmp}/out")"
grep -q -- '--security=both' "${tmp}/out" ||
  fail "--dry-run does not measure the secure bridges by default: $(cat "${tmp}/out")"
! grep -q netns_pair "${tmp}/out" || fail "--link=lo makes namespaces"

check_refused() {  # STATUS WHAT ARGS...
  local want="$1" what="$2"
  shift 2
  bash "${script}" "$@" >"${tmp}/out" 2>"${tmp}/err"
  local status=$?
  [[ ${status} == "${want}" ]] || fail "$* exited ${status}, want ${want}"
  grep -q -- "${what}" "${tmp}/err" ||
    fail "$*: the message does not name ${what}: $(cat "${tmp}/err")"
  [[ $(wc -l <"${tmp}/err") == 1 ]] || fail "$*: more than one line"
  [[ ! -s "${tmp}/out" ]] || fail "$* printed to stdout"
}
check_refused 2 "unknown argument '--lnik=lo'" --lnik=lo
check_refused 1 "--seconds=0" --seconds=0 --dry-run
check_refused 1 "--seconds=x" --seconds=x --dry-run
check_refused 1 "--link=wifi" --link=wifi --dry-run
check_refused 1 "--ping_interval_us=-5" --ping_interval_us=-5 --dry-run
check_refused 1 "--security=maybe" --security=maybe --dry-run
check_refused 1 "--latency_rounds=0" --latency_rounds=0 --dry-run
check_refused 1 "--latency_rounds=21" --latency_rounds=21 --dry-run

finish
