#!/bin/bash
# tools/bench/ipc.sh's own arguments: --help, --dry-run, and a clear refusal
# of anything else, before it builds or measures anything.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
script="${root}/tools/bench/ipc.sh"

bash "${script}" --help >"${tmp}/out" 2>"${tmp}/err" || fail "--help exited $?"
grep -q 'tools/bench/ipc.sh \[--priority=N\]' "${tmp}/out" ||
  fail "--help does not show the usage: $(cat "${tmp}/out")"
grep -q 'iox-roudi' "${tmp}/out" || fail "--help does not say it runs iox-roudi"

bash "${script}" --priority=70 --runs=2 --dry-run >"${tmp}/out" 2>"${tmp}/err" ||
  fail "--dry-run exited $?: $(cat "${tmp}/err")"
grep -q 'measure: flock -o /tmp/aos-bazel.lock bazel-bin/tools/bench/ipc_bench .*--priority=70 --runs=2' \
  "${tmp}/out" || fail "--dry-run does not measure under the lock: $(cat "${tmp}/out")"
grep -q 'build:   flock -o /tmp/aos-bazel.lock' "${tmp}/out" ||
  fail "--dry-run does not build under the lock: $(cat "${tmp}/out")"

bash "${script}" --prority=70 >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 2 ]] || fail "an unknown argument exited ${status}, want 2"
grep -q "unknown argument '--prority=70'" "${tmp}/err" ||
  fail "the unknown argument is not named: $(cat "${tmp}/err")"
[[ $(wc -l <"${tmp}/err") == 1 ]] || fail "more than one line: $(cat "${tmp}/err")"
finish
