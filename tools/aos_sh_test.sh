#!/bin/bash
# tools/aos.sh's own arguments: no argument prints the help, an unknown
# command is one line and exit 1, before anything is installed or built.
set -uo pipefail
script="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/aos.sh"
tmp="${TEST_TMPDIR}"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

bash "${script}" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "no argument exited ${status}"
grep -q 'tools/aos.sh run' "${tmp}/out" || fail "no argument did not print the help: $(cat "${tmp}/out")"

bash "${script}" frobnicate >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "an unknown command exited ${status}, want 1"
[[ $(wc -l <"${tmp}/err") == 1 ]] || fail "more than one line: $(cat "${tmp}/err")"
grep -q "unknown command 'frobnicate'" "${tmp}/err" || fail "the command is not named: $(cat "${tmp}/err")"

if ((failures > 0)); then
  echo "${failures} failure(s)" >&2
  exit 1
fi
echo "PASS"
