#!/bin/bash
# aos_launch starts applications, waits for their first timing reports,
# runs the foreground command and stops them in reverse order; what goes
# wrong on the way is named, and its exit status says so.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
launch="${root}/aos/starter/aos_launch"
app="${root}/aos/starter/launcher_test_app"
config="${root}/aos/testing/test_config.json"
base="${tmp}/shm"
flags=(--config="${config}" --shm_base="${base}")
# The test app as NAME, with behaviour $2 (default run).
app_args() {
  echo "$1" "${app}" "${flags[@]}" --name="$1" --behaviour="${2:-run}" \
    --timing_report_ms=50
}

# Two applications, both reporting before the foreground command runs;
# stopped second first.
# shellcheck disable=SC2046
"${launch}" "${flags[@]}" --statuses="${tmp}/statuses" --output_dir="${tmp}" \
  -- $(app_args first) :: $(app_args second) \
  ::: true 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "two applications: exit ${status}: $(cat "${tmp}/err")"
[[ "$(cat "${tmp}/statuses")" == $'second 0\nfirst 0' ]] ||
  fail "stopped in this order, with these statuses: $(cat "${tmp}/statuses")"

# One that dies starting: named with its status and what it said; exit 1;
# the foreground command never runs.
# shellcheck disable=SC2046
"${launch}" "${flags[@]}" --output_dir="${tmp}" \
  -- $(app_args good) :: $(app_args bad exit3) ::: touch "${tmp}/ran" \
  2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "one dies: exit ${status}, want 1"
grep -q "^aos_launch: bad exited with status 3 before its first timing report; it said:" "${tmp}/err" ||
  fail "one dies: said $(cat "${tmp}/err")"
grep -q "launcher_test_app: told to fail" "${tmp}/err" ||
  fail "one dies: what it said is not shown: $(cat "${tmp}/err")"
[[ ! -e "${tmp}/ran" ]] || fail "one dies: the foreground command ran"

# The foreground command fails: named, exit 1, the applications stopped.
# shellcheck disable=SC2046
"${launch}" "${flags[@]}" --output_dir="${tmp}" -- $(app_args good) \
  ::: sh -c 'exit 2' 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "foreground fails: exit ${status}, want 1"
grep -q "^aos_launch: sh exited with status 2$" "${tmp}/err" ||
  fail "foreground fails: said $(cat "${tmp}/err")"

# No foreground command: runs until SIGTERM, then stops them; exit 0.
# shellcheck disable=SC2046
"${launch}" "${flags[@]}" --output_dir="${tmp}" --statuses="${tmp}/statuses" \
  -- $(app_args alone) 2>"${tmp}/err" &
pid=$!
kill_at_exit "${pid}"
wait_for "^aos_launch: alone running; stopped by SIGINT" "${tmp}/err" ||
  fail "until SIGTERM: never said it runs: $(cat "${tmp}/err")"
kill -TERM "${pid}"
wait "${pid}"
status=$?
[[ ${status} == 0 ]] || fail "until SIGTERM: exit ${status}: $(cat "${tmp}/err")"
[[ "$(cat "${tmp}/statuses")" == "alone 0" ]] ||
  fail "until SIGTERM: statuses $(cat "${tmp}/statuses")"

# Bad input: one line naming the culprit, exit 1.
expect_one_line_error "give at least one application" "${launch}" "${flags[@]}"
expect_one_line_error "application 'lonely': give NAME BINARY" \
  "${launch}" "${flags[@]}" -- lonely
expect_one_line_error "--no_reports: no application is called ghost" \
  "${launch}" "${flags[@]}" --no_reports=ghost -- a "${app}"
expect_one_line_error "missing: cannot run ${tmp}/nothing" \
  "${launch}" "${flags[@]}" -- missing "${tmp}/nothing"
expect_one_line_error "--ready_timeout_s=0 is too short: give a time > 0" \
  "${launch}" "${flags[@]}" --ready_timeout_s=0 -- a "${app}"
expect_one_line_error "given twice" \
  "${launch}" "${flags[@]}" -- a "${app}" :: a "${app}"

finish "aos_launch: every case as expected"
