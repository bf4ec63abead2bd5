# The harness shell tests share: sourced first thing by a sh_test that
# depends on //tools/testing:shell_test_lib.
#
#   source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
#   "${root}/examples/ping" --shm_base="${tmp}/shm" &
#   kill_at_exit $!
#   "${root}/aos/tools/aos_dump" ... >"${tmp}/out" || fail "aos_dump exited $?"
#   wait_for 'Ping' "${tmp}/out" || fatal "no Ping in 60 s"
#   finish
#
# Sets `root` (the workspace in the runfiles tree), `tmp` (the test's scratch
# directory, $TEST_TMPDIR) and `failures`, and turns on `set -uo pipefail`
# (not -e: a test checks every command's status itself and goes on, so one
# run reports every failing check). It owns the EXIT trap: register cleanups
# with kill_at_exit and at_exit, never with `trap ... EXIT`.

set -uo pipefail

root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

# fail MESSAGE: one "FAIL: MESSAGE" line on stderr; the test goes on and
# fails at `finish`.
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# fatal MESSAGE: as fail, then ends the test at once (exit 1), for a check
# the rest of the test depends on.
fatal() {
  echo "FAIL: $*" >&2
  exit 1
}

# finish [PASS_TEXT]: ends the test: exit 1 after "N failure(s)" if any check
# failed, else exit 0 after PASS_TEXT (default "PASS").
finish() {
  if ((failures > 0)); then
    echo "${failures} failure(s)" >&2
    exit 1
  fi
  echo "${1:-PASS}"
  exit 0
}

# wait_for PATTERN FILE [SECONDS]: waits until FILE has a line matching the
# grep (basic) regular expression PATTERN, at most SECONDS (default 60),
# looking every 0.1 s; 0 once it does, 1 if it never did. The limit only ends
# a hang: no test asserts how fast anything is.
wait_for() {
  local pattern="$1" file="$2" seconds="${3:-60}" i
  for ((i = 0; i < seconds * 10; ++i)); do
    grep -q -- "${pattern}" "${file}" 2>/dev/null && return 0
    sleep 0.1
  done
  grep -q -- "${pattern}" "${file}" 2>/dev/null
}

# wait_until COMMAND...: runs COMMAND (its output discarded) every 0.1 s
# until it exits 0, for at most 60 s: for what a line in a file cannot show
# (a file appearing, a count reached). 0 once it did, 1 if it never did; as
# wait_for, the limit only ends a hang.
wait_until() {
  local i
  for ((i = 0; i < 600; ++i)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  "$@" >/dev/null 2>&1
}

# expect_one_line_error PATTERN COMMAND...: runs COMMAND (stdin empty),
# which must exit 1 with exactly one line on stderr, matching the extended
# regular expression PATTERN: how every bad flag, path or argument ends a
# program here. Each way it does not is a `fail` naming the command.
expect_one_line_error() {
  local pattern="$1"
  shift
  "$@" >"${tmp}/one_line_error.out" 2>"${tmp}/one_line_error.err" </dev/null
  local status=$? said
  said="$(cat "${tmp}/one_line_error.err")"
  [[ ${status} == 1 ]] || fail "$*: exited ${status}, want 1: ${said}"
  [[ $(wc -l <"${tmp}/one_line_error.err") == 1 ]] || fail "$*: not one line: ${said}"
  grep -qE -- "${pattern}" "${tmp}/one_line_error.err" || fail "$*: said ${said}, want ${pattern}"
}

_shell_test_lib_pids=()
_shell_test_lib_at_exit=()

# kill_at_exit PID...: SIGKILLs these processes when the test exits, however
# it exits (a process already gone is fine).
kill_at_exit() {
  _shell_test_lib_pids+=("$@")
}

# at_exit COMMAND: runs COMMAND (evaluated as shell text) when the test
# exits, after the kill_at_exit processes are killed; the latest first.
at_exit() {
  _shell_test_lib_at_exit+=("$1")
}

_shell_test_lib_exit() {
  local status=$? i
  if ((${#_shell_test_lib_pids[@]} > 0)); then
    kill -9 "${_shell_test_lib_pids[@]}" 2>/dev/null
  fi
  for ((i = ${#_shell_test_lib_at_exit[@]} - 1; i >= 0; --i)); do
    eval "${_shell_test_lib_at_exit[i]}"
  done
  exit "${status}"
}
trap _shell_test_lib_exit EXIT
