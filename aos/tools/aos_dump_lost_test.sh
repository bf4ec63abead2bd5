#!/bin/bash
# aos_dump says when it lost messages: stopped (SIGSTOP) while ping sends 300
# on a /test that keeps 100, it prints one line on stderr naming how many it
# lost, the channel and where, and goes on. Nothing here depends on how fast
# the machine is: aos_dump is known to be watching before it is stopped, and
# it stays stopped until ping has sent them all.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
dump="${root}/aos/tools/aos_dump"
ping="${root}/examples/ping"
config="${root}/aos/tools/lossy_dump_config.json"
base="${tmp}/shm"
mkdir -p "${base}"
# The messages /test aos.examples.Ping keeps (testdata/lossy_dump.json:
# "frequency" 1000 times "channel_storage_duration" 100 ms).
readonly queue_size=100
ping_args=(--config="${config}" --shm_base="${base}" --priority=0)

# One ping in the queue, then aos_dump --fetch: it prints that ping from an
# OnRun callback, which runs after its watcher has started (ShmEventLoop::
# Run), so once the line is there, every later ping is either printed or
# counted lost.
"${ping}" "${ping_args[@]}" --count=1 >/dev/null 2>"${tmp}/ping_err" ||
  fatal "ping --count=1 failed: $(cat "${tmp}/ping_err")"
"${dump}" --config="${config}" --shm_base="${base}" --fetch \
  /test aos.examples.Ping >"${tmp}/out" 2>"${tmp}/err" &
dump_pid=$!
kill_at_exit "${dump_pid}"
wait_for ' /test aos.examples.Ping: {' "${tmp}/out"
printed_before="$(grep -c ' /test aos.examples.Ping: {' "${tmp}/out")"
((printed_before == 1)) ||
  fatal "aos_dump --fetch printed ${printed_before} pings in 60 s, want 1; stderr: $(cat "${tmp}/err")"

# Stopped: ping sends 300, every 2 ms (slower than the channel's limit, so
# none is refused unless ping bursts), and exits a second after the last
# (no pong answers here). The queue keeps the newest 100 of them.
kill -STOP "${dump_pid}"
"${ping}" "${ping_args[@]}" --count=300 --sleep_ms=2 \
  --summary_json="${tmp}/ping.json" >/dev/null 2>"${tmp}/ping_err" ||
  fatal "ping failed: $(cat "${tmp}/ping_err")"
kill -CONT "${dump_pid}"
# On SIGTERM the loop first delivers every message in the queue
# (ShmEventLoop::HandleSignals), so nothing is left unread when it exits.
kill -TERM "${dump_pid}"
wait "${dump_pid}" || fatal "aos_dump exited $?: $(cat "${tmp}/err")"

lost_lines="$(grep -c '^aos_dump: lost [0-9]* messages on /test aos.examples.Ping before queue index [0-9]* (the sender overwrote them before we read them)$' "${tmp}/err")"
((lost_lines == 1)) || fatal "${lost_lines} lines saying what was lost, want 1; stderr: $(cat "${tmp}/err")"
lost="$(sed -nE 's/^aos_dump: lost ([0-9]+) messages.*/\1/p' "${tmp}/err")"
printed="$(($(grep -c ' /test aos.examples.Ping: {' "${tmp}/out") - printed_before))"
# Pings refused for going faster than the channel allows are not sent.
sent="$(python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s["pings"] - s["not_sent"])' "${tmp}/ping.json")"
((sent > queue_size)) || fail "ping sent only ${sent} of 300"
# All sent while aos_dump was stopped: it reads the newest queue_size and
# says it lost exactly the rest.
((printed == queue_size)) || fail "printed ${printed} of the ${sent} sent while stopped, want ${queue_size}"
((lost == sent - queue_size)) || fail "lost ${lost} of the ${sent} sent while stopped, want $((sent - queue_size))"
finish "ping sent ${sent} while aos_dump was stopped: printed ${printed}, lost ${lost}"
