#!/bin/bash
# aos_dump says when it lost messages: stopped (SIGSTOP) for a second while
# ping sends at 1 kHz on a /test that keeps 100 ms, it prints one line on
# stderr naming how many it lost, the channel and where, and goes on.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
dump="${root}/aos/tools/aos_dump"
ping="${root}/examples/ping"
config="${root}/aos/tools/lossy_dump_config.json"
tmp="${TEST_TMPDIR}"
base="${tmp}/shm"
mkdir -p "${base}"
fail() { echo "FAIL: $*" >&2; exit 1; }

"${dump}" --config="${config}" --shm_base="${base}" /test aos.examples.Ping \
  >"${tmp}/out" 2>"${tmp}/err" &
dump_pid=$!
trap 'kill -9 ${dump_pid} 2>/dev/null' EXIT
sleep 0.5
"${ping}" --config="${config}" --shm_base="${base}" --priority=0 \
  --sleep_ms=1 --duration=3 --summary_json="${tmp}/ping.json" \
  >/dev/null 2>"${tmp}/ping_err" &
ping_pid=$!
sleep 0.5
kill -STOP "${dump_pid}"
sleep 1
kill -CONT "${dump_pid}"
wait "${ping_pid}" || fail "ping failed: $(cat "${tmp}/ping_err")"
sleep 0.2
kill -TERM "${dump_pid}"
wait "${dump_pid}"

lost_lines="$(grep -c '^aos_dump: lost [0-9]* messages on /test aos.examples.Ping before queue index [0-9]* (the sender overwrote them before we read them)$' "${tmp}/err")"
[[ "${lost_lines}" -ge 1 ]] || fail "no line saying what was lost; stderr: $(cat "${tmp}/err")"
lost="$(sed -nE 's/^aos_dump: lost ([0-9]+) messages.*/\1/p' "${tmp}/err" | awk '{s += $1} END {print s}')"
printed="$(grep -c ' /test aos.examples.Ping: {' "${tmp}/out")"
# Stopped for a second at 1 kHz with room for 100: most of that second is
# lost, and what was printed and what was lost add up to exactly what ping
# sent (all of it after aos_dump started watching).
# (Pings refused for going faster than the channel allows are not sent.)
sent="$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["pings"] - s["not_sent"])' "${tmp}/ping.json")"
((lost > 100)) || fail "lost ${lost}, expected most of the stopped second"
((lost + printed == sent)) || fail "printed ${printed} + lost ${lost} != ${sent} sent"
echo "ping sent ${sent}: printed ${printed}, lost ${lost} (in ${lost_lines} line(s))"
