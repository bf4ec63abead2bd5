#!/bin/bash
# tools/bench/bare_relay: refuses bad flags in one line, and two relays on
# loopback carry ping's Ping to pong and pong's Pong back (the bridge
# bench's relay floor measures exactly that path).
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
relay="${root}/tools/bench/bare_relay"
config="${root}/tools/bench/bridge_bench_config.json"

"${relay}" --help >"${tmp}/out" 2>&1
status=$?
[[ ${status} == 0 ]] || fail "--help exited ${status}"
grep -q 'relay floor' "${tmp}/out" || fail "--help does not say what it is for"

check_refused() {  # WHAT ARGS...
  local what="$1"
  shift
  "${relay}" "$@" >"${tmp}/out" 2>"${tmp}/err"
  local status=$?
  [[ ${status} == 1 ]] || fail "$* exited ${status}, want 1"
  grep -q -- "${what}" "${tmp}/err" ||
    fail "$*: the message does not name ${what}: $(cat "${tmp}/err")"
  [[ $(wc -l <"${tmp}/err") == 1 ]] || fail "$*: not one line: $(cat "${tmp}/err")"
}
check_refused "--config is required"
check_refused "--channel=/nope" --config="${config}" --node=pi1 \
  --channel=/nope --shm_base="${tmp}/refused"

# Domain 101: above every test binary's range (aos/network/
# test_dds_domain.h), held with a lock file of its own so that copies of
# this test take turns.
exec 9>/tmp/aos_test_dds_domain_101.lock
flock 9
for node in 1 2; do
  "${relay}" --config="${config}" --node=pi${node} --shm_base="${tmp}/pi${node}" \
    --dds_domain=101 --dds_interface=lo 2>"${tmp}/relay${node}" &
  kill_at_exit $!
done
for node in 1 2; do
  wait_for 'reader matched' "${tmp}/relay${node}" ||
    fatal "relay pi${node} never said its peer's reader matched: $(cat "${tmp}/relay${node}")"
done
"${root}/examples/pong" --config="${config}" --node=pi2 \
  --shm_base="${tmp}/pi2" 2>"${tmp}/pong" &
kill_at_exit $!
# pong answers once it runs; pings before that go unanswered, not wrong.
sleep 1
"${root}/examples/ping" --config="${config}" --node=pi1 \
  --shm_base="${tmp}/pi1" --sleep_us=10000 --duration=2 >"${tmp}/ping" 2>&1 ||
  fail "ping exited $?: $(cat "${tmp}/ping")"
pongs=$(sed -n 's/.* \([0-9]*\) pongs,.*/\1/p' "${tmp}/ping" | tail -1)
[[ -n "${pongs}" && "${pongs}" -gt 0 ]] ||
  fail "no pong came back through the relays: $(cat "${tmp}/ping")"
finish
