#!/bin/bash
# aos_channels counts what aos_send sends while it watches: exact counts
# from queue indices, never wall-clock rates. Piped, it writes no ANSI
# codes.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
send="${root}/aos/tools/aos_send"
channels="${root}/aos/tools/aos_channels"
config="${root}/examples/pingpong_config.json"
base="${tmp}/shm"
mkdir -p "${base}"
args=(--config="${config}" --shm_base="${base}")

# 3 Pings before it watches: in the total, not in the messages.
"${send}" "${args[@]}" --count=3 /test aos.examples.Ping '{"value": 1}' ||
  fail "aos_send --count=3 exited $?"
"${channels}" "${args[@]}" --once --duration=0.2 >"${tmp}/once" 2>"${tmp}/err" ||
  fail "aos_channels --once exited $?: $(cat "${tmp}/err")"
grep -qE '^  /test aos\.examples\.Ping +0 +0 +3 +[0-9.e-]+ s ago +20 B +-$' "${tmp}/once" ||
  fail "--once row of /test Ping: $(cat "${tmp}/once")"
grep -qE '^  /test aos\.examples\.Pong +0 +0 +- +never +- +-$' "${tmp}/once" ||
  fail "--once row of /test Pong: $(cat "${tmp}/once")"
# A title, a header and a row per channel (/test's two, /aos's four).
[[ "$(grep -c . "${tmp}/once")" == 8 ]] || fail "--once printed more than one table: $(cat "${tmp}/once")"

# Watching: once it printed a table it has polled, so the 20 sent next are
# all counted, whatever the machine's speed.
"${channels}" "${args[@]}" --interval_s=0.1 >"${tmp}/live" 2>"${tmp}/err" &
pid=$!
kill_at_exit "${pid}"
wait_for 'watched for' "${tmp}/live" || fail "no table in 60 s: $(cat "${tmp}/err")"
"${send}" "${args[@]}" --count=20 --rate_hz=200 /test aos.examples.Ping \
  '{"value": 2}' || fail "aos_send --count=20 exited $?"
kill -INT "${pid}"
wait "${pid}" || fail "aos_channels exited $? on SIGINT: $(cat "${tmp}/err")"
last="$(grep '/test aos\.examples\.Ping' "${tmp}/live" | tail -1)"
[[ "${last}" =~ ^\ \ /test\ aos\.examples\.Ping\ +[0-9.]+\ +20\ +23\  ]] ||
  fail "the last row of /test Ping, want 20 messages of 23: ${last}"
grep -q $'\x1b' "${tmp}/live" && fail "ANSI codes in a pipe"

finish
