#!/bin/bash
# tools/systemd/starterd.service is a unit systemd accepts (systemd-analyze
# verify, with its paths pointed at the built starterd and a scratch
# directory), and starterd accepts every flag its ExecStart gives.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
unit="${root}/tools/systemd/starterd.service"
starterd="${root}/aos/starter/starterd"

exec_start="$(sed -n 's/^ExecStart=//p' "${unit}")"
[[ "${exec_start}" == /opt/aos/bin/starterd\ * ]] ||
  fail "ExecStart does not run /opt/aos/bin/starterd: ${exec_start}"
# Its flags, with the config pointed at one that exists.
read -r -a flags <<<"${exec_start#/opt/aos/bin/starterd }"
flags=("${flags[@]/--config=\/opt\/aos\/config.json/--config=${root}/aos/testing/test_config.json}")
"${starterd}" "${flags[@]}" --version >/dev/null 2>"${tmp}/flags.err" ||
  fail "starterd refuses the unit's flags ${flags[*]}: $(cat "${tmp}/flags.err")"

if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze verify: systemd-analyze is not installed here"
  finish "starterd.service: its flags are starterd's"
fi
mkdir -p "${tmp}/unit"
sed -e "s|/opt/aos/bin/starterd|${starterd}|" -e "s|/opt/aos|${tmp}|g" \
  "${unit}" >"${tmp}/unit/starterd.service"
systemd-analyze verify "${tmp}/unit/starterd.service" >"${tmp}/verify.out" 2>&1
status=$?
[[ ${status} == 0 ]] || fail "systemd-analyze verify exited ${status}: $(cat "${tmp}/verify.out")"
# Warnings (an unknown key, a bad value) do not change its status.
if grep -q "starterd.service" "${tmp}/verify.out"; then
  fail "systemd-analyze verify warns: $(cat "${tmp}/verify.out")"
fi
finish "starterd.service: systemd accepts it, and its flags are starterd's"
