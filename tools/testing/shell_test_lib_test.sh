#!/bin/bash
# shell_test_lib.sh: each helper, on small scripts that source it, run here
# as a shell test would be.
set -uo pipefail
lib="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
work="${TEST_TMPDIR}/lib_test"
mkdir -p "${work}"
status=0
bad() { echo "FAIL: $*" >&2; status=1; }

# run NAME BODY: runs BODY as a test script that sourced the library; its
# stdout, stderr and exit status go to ${work}/NAME.{out,err,status}.
run() {
  local name="$1" body="$2"
  printf 'source "%s"\n%s\n' "${lib}" "${body}" >"${work}/${name}.sh"
  mkdir -p "${work}/${name}.tmp"
  TEST_TMPDIR="${work}/${name}.tmp" bash "${work}/${name}.sh" \
    >"${work}/${name}.out" 2>"${work}/${name}.err"
  echo $? >"${work}/${name}.status"
}
status_of() { cat "${work}/$1.status"; }

run pass 'finish'
[[ "$(status_of pass)" == 0 ]] || bad "an empty test exited $(status_of pass)"
[[ "$(cat "${work}/pass.out")" == PASS ]] || bad "an empty test printed: $(cat "${work}/pass.out")"

run text 'finish "all checks passed"'
[[ "$(cat "${work}/text.out")" == "all checks passed" ]] || bad "finish TEXT printed: $(cat "${work}/text.out")"

run two_failures 'fail "one"; fail "two"; echo still running; finish'
[[ "$(status_of two_failures)" == 1 ]] || bad "two failures exited $(status_of two_failures)"
grep -qx 'still running' "${work}/two_failures.out" || bad "fail ended the test"
grep -qx 'FAIL: one' "${work}/two_failures.err" || bad "no 'FAIL: one': $(cat "${work}/two_failures.err")"
grep -qx '2 failure(s)' "${work}/two_failures.err" || bad "no count: $(cat "${work}/two_failures.err")"

run one_line 'expect_one_line_error "^x: bad$" sh -c "echo x: bad >&2; exit 1"; finish'
[[ "$(status_of one_line)" == 0 ]] || bad "a right one-line error failed: $(cat "${work}/one_line.err")"
run not_one_line 'expect_one_line_error "bad" sh -c "echo bad >&2; echo more >&2; exit 1"
expect_one_line_error "bad" sh -c "echo bad >&2; exit 2"
expect_one_line_error "good" sh -c "echo bad >&2; exit 1"; finish'
[[ "$(status_of not_one_line)" == 1 ]] || bad "wrong one-line errors passed"
grep -q 'not one line' "${work}/not_one_line.err" || bad "two lines not said: $(cat "${work}/not_one_line.err")"
grep -q 'exited 2, want 1' "${work}/not_one_line.err" || bad "exit 2 not said: $(cat "${work}/not_one_line.err")"
grep -q 'said bad, want good' "${work}/not_one_line.err" || bad "the pattern not said: $(cat "${work}/not_one_line.err")"

run fatal 'fatal "gone"; echo after'
[[ "$(status_of fatal)" == 1 ]] || bad "fatal exited $(status_of fatal)"
grep -q after "${work}/fatal.out" && bad "fatal did not end the test"
grep -qx 'FAIL: gone' "${work}/fatal.err" || bad "fatal said: $(cat "${work}/fatal.err")"

run vars '[[ "${tmp}" == "${TEST_TMPDIR}" ]] || fail "tmp is ${tmp}"
[[ "${root}" == "${TEST_SRCDIR}/${TEST_WORKSPACE}" ]] || fail "root is ${root}"
[[ -o pipefail ]] || fail "no pipefail"
finish'
[[ "$(status_of vars)" == 0 ]] || bad "root, tmp or pipefail: $(cat "${work}/vars.err")"

# Cleanups run on every exit, the processes killed first, the latest
# command first; the exit status is the test's.
run cleanup 'sleep 600 &
echo $! >"'"${work}"'/cleanup.pid"
kill_at_exit $!
at_exit "echo first registered >>\"'"${work}"'/cleanup.log\""
at_exit "echo second registered >>\"'"${work}"'/cleanup.log\""
fatal "stop"'
[[ "$(status_of cleanup)" == 1 ]] || bad "a fatal test with cleanups exited $(status_of cleanup)"
# Killed, it may linger a moment as a zombie until its new parent reaps it.
alive() {
  local state
  state="$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ -n "${state}" && "${state}" != Z ]]
}
alive "$(cat "${work}/cleanup.pid")" && bad "the background process outlived the test"
[[ "$(cat "${work}/cleanup.log" 2>/dev/null)" == $'second registered\nfirst registered' ]] ||
  bad "at_exit order: $(cat "${work}/cleanup.log" 2>/dev/null)"

# wait_for sees a line written later by another process; gives up on one
# that never comes (a 1 s limit here).
run wait_for '(sleep 0.3; echo "ready now" >"${tmp}/log") &
wait_for "^ready" "${tmp}/log" || fail "did not see it"
wait_for "never" "${tmp}/log" 1 && fail "saw what was never written"
finish'
[[ "$(status_of wait_for)" == 0 ]] || bad "wait_for: $(cat "${work}/wait_for.err")"

# wait_until sees a command succeed once another process made it so.
run wait_until '(sleep 0.3; touch "${tmp}/made") &
wait_until test -e "${tmp}/made" || fail "did not see the file"
finish'
[[ "$(status_of wait_until)" == 0 ]] || bad "wait_until: $(cat "${work}/wait_until.err")"

((status == 0)) && echo PASS
exit "${status}"
