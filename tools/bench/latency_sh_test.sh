#!/bin/bash
# tools/bench/latency.sh's own arguments: --help, and a clear refusal of
# anything else, before it installs or builds anything.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
script="${root}/tools/bench/latency.sh"

bash "${script}" --help >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "--help exited ${status}"
grep -q 'tools/bench/latency.sh \[--long\] \[--main_job_only\] \[--json=FILE\]' "${tmp}/out" ||
  fail "--help does not show the usage: $(cat "${tmp}/out")"
grep -q 'cyclictest' "${tmp}/out" || fail "--help does not say what it compares with"

bash "${script}" --lnog >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 2 ]] || fail "an unknown argument exited ${status}, want 2"
grep -q "unknown argument '--lnog'" "${tmp}/err" ||
  fail "the message does not name the argument: $(cat "${tmp}/err")"
[[ ! -s "${tmp}/out" ]] || fail "an unknown argument printed to stdout"

finish
