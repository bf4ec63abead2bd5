#!/bin/bash
# tools/bench/bridge_bench: --help, and a flag out of range refused in one
# line that names it, before anything is started or measured.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
bench="${root}/tools/bench/bridge_bench"

"${bench}" --help >"${tmp}/out" 2>&1
status=$?
[[ ${status} == 0 ]] || fail "--help exited ${status}"
grep -q 'ddsperf' "${tmp}/out" || fail "--help does not say what it compares with"
grep -q 'latency_rounds' "${tmp}/out" || fail "--help does not show --latency_rounds"

work="--work_dir=${tmp}/work"
check_refused() {  # WHAT ARGS...
  local what="$1"
  shift
  expect_one_line_error "${what}" "${bench}" "$@"
}
check_refused "--latency_rounds" "${work}" --latency_rounds=0
check_refused "--latency_rounds" "${work}" --latency_rounds=21
check_refused "--seconds" "${work}" --seconds=0
check_refused "--security" "${work}" --security=maybe
check_refused "--security_rounds" "${work}" --security_rounds=0
check_refused "--ping_interval_us" "${work}" --ping_interval_us=5
check_refused "--links: 'wifi'" "${work}" --security=off --links=wifi
check_refused "--make_test_ca" "${work}" --make_test_ca="${tmp}/nope.sh"
check_refused "--work_dir" --links=lo
[[ ! -e "${tmp}/work" ]] || fail "a refused run made its work directory"

finish
