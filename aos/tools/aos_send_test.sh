#!/bin/bash
# aos_send sends what aos_dump prints; aos_dump CHANNEL without a TYPE prints
# every channel of that name; bad input to either is one line naming the
# culprit: the channel and the place in the JSON, the node that may send,
# the config that was read, a --shm_base nothing has used.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
send="${root}/aos/tools/aos_send"
dump="${root}/aos/tools/aos_dump"
config="${root}/examples/pingpong_config.json"
multinode="${root}/examples/multinode_pingpong_config.json"
base="${tmp}/shm"
mkdir -p "${base}"
args=(--config="${config}" --shm_base="${base}")

# One Ping, then aos_dump --fetch /test (no type): once it printed that
# Ping it is watching both channels, so what aos_send sends next is printed.
"${send}" "${args[@]}" /test aos.examples.Ping '{"value": 1}' 2>"${tmp}/err" ||
  fail "aos_send exited $?: $(cat "${tmp}/err")"
"${dump}" "${args[@]}" --fetch --count=4 /test >"${tmp}/dump" 2>"${tmp}/dump_err" &
dump_pid=$!
kill_at_exit "${dump_pid}"
wait_for ' /test aos.examples.Ping: { "value": 1 }' "${tmp}/dump" ||
  fail "aos_dump --fetch did not print aos_send's Ping: $(cat "${tmp}/dump" "${tmp}/dump_err")"
# The JSON from stdin, and the type by part of it.
echo '{"value": 7, "initial_send_time": 3}' |
  "${send}" "${args[@]}" /test Pong - 2>"${tmp}/err" ||
  fail "aos_send - exited $?: $(cat "${tmp}/err")"
"${send}" "${args[@]}" --count=2 --rate_hz=50 /test aos.examples.Ping \
  '{value: 2}' 2>"${tmp}/err" || fail "aos_send --count=2 exited $?: $(cat "${tmp}/err")"
wait "${dump_pid}" || fail "aos_dump exited $?: $(cat "${tmp}/dump_err")"
[[ "$(grep -c ' /test aos.examples.Pong: { "value": 7, "initial_send_time": 3 }$' "${tmp}/dump")" == 1 ]] ||
  fail "aos_dump /test did not print the Pong: $(cat "${tmp}/dump")"
[[ "$(grep -c ' /test aos.examples.Ping: { "value": 2 }$' "${tmp}/dump")" == 2 ]] ||
  fail "aos_dump /test did not print both Pings of --count=2: $(cat "${tmp}/dump")"

expect_one_line_error '^aos_send: /test aos\.examples\.Ping:1:10: unknown field: valu$' \
  "${send}" "${args[@]}" /test aos.examples.Ping '{"valu": 1}'
expect_one_line_error '^aos_send: /test aos\.examples\.Ping:2:[0-9]+: ' \
  "${send}" "${args[@]}" /test aos.examples.Ping $'{"value":\n }'
expect_one_line_error '^aos_send: several channels are named /test; add the type: ' \
  "${send}" "${args[@]}" /test '{"value": 1}'
expect_one_line_error '^aos_send: /test aos\.examples\.Ping is not sendable on node pi2: only its source node, pi1, sends it' \
  "${send}" --config="${multinode}" --shm_base="${base}" --node=pi2 \
  /test aos.examples.Ping '{"value": 1}'
# Without --config: the built-in aos/aos.json, which is said.
expect_one_line_error '^aos_send: no channel /test .*the config is the built-in aos/aos\.json \(only /aos\), as no --config was given: give your system.s, e\.g\. --config=' \
  "${send}" --shm_base="${base}" /test Ping '{"value": 1}'
expect_one_line_error '^aos_dump: no channel /test .*the config is the built-in aos/aos\.json \(only /aos\), as no --config was given' \
  "${dump}" --shm_base="${base}" /test
expect_one_line_error '^aos_send: give CHANNEL \[TYPE\] JSON' "${send}" "${args[@]}" /test

# A --shm_base no process has used: aos_dump says so once, and waits on.
"${dump}" --config="${config}" --shm_base="${tmp}/mistyped" \
  --nothing_warning_s=0.2 /test aos.examples.Ping >"${tmp}/out" 2>"${tmp}/err" &
waiting_pid=$!
kill_at_exit "${waiting_pid}"
wait_for 'nothing on' "${tmp}/err" ||
  fail "aos_dump on an unused --shm_base said nothing: $(cat "${tmp}/err")"
grep -qx "aos_dump: nothing on /test aos.examples.Ping yet; no process had opened it under --shm_base=${tmp}/mistyped (is that the --shm_base its senders use?); still waiting" "${tmp}/err" ||
  fail "the --shm_base line: $(cat "${tmp}/err")"
sleep 0.5
kill -0 "${waiting_pid}" 2>/dev/null || fail "aos_dump stopped waiting"
[[ $(grep -c 'nothing on' "${tmp}/err") == 1 ]] || fail "said more than once: $(cat "${tmp}/err")"
# On the --shm_base in use, nothing is said.
"${dump}" "${args[@]}" --nothing_warning_s=0.2 /test aos.examples.Ping \
  >"${tmp}/out" 2>"${tmp}/err" &
kill_at_exit $!
sleep 1
grep -q 'nothing on' "${tmp}/err" && fail "warned on a --shm_base in use: $(cat "${tmp}/err")"

finish
