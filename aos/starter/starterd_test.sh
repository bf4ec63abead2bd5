#!/bin/bash
# starterd runs a node's applications from its config and aos_starter
# talks to it: status, stop, start, restart; a starter killed with SIGKILL
# leaves no application running; a SIGTERMed one stops them in reverse
# order; bad input is one line naming the culprit.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
starterd="${root}/aos/starter/starterd"
aos_starter="${root}/aos/starter/aos_starter"
streamer="${root}/aos/tools/aos_timing_report_streamer"
app="${root}/aos/starter/launcher_test_app"
base="${tmp}/shm"
config="${tmp}/node.json"
flags=(--config="${config}" --shm_base="${base}")

# alpha and beta: the test app, reporting every 50 ms, recording the order
# of the stops. No --shm_base: they use the starter's (AOS_SHM_BASE).
application() {
  printf '{"name": "%s", "executable_name": "%s", "args": ["--config=%s", "--name=%s", "--timing_report_ms=50", "--on_stop_append=%s"]}' \
    "$1" "${app}" "${config}" "$1" "${tmp}/stopped"
}
cat >"${config}" <<JSON
{
  "imports": ["${root}/aos/testing/test_config.json"],
  "applications": [$(application alpha), $(application beta)]
}
JSON

# Both run and report, as aos_starter status shows.
"${starterd}" "${flags[@]}" --statuses="${tmp}/statuses" 2>"${tmp}/starterd.err" &
starter=$!
kill_at_exit "${starter}"
reporting() {
  "${aos_starter}" "${flags[@]}" status >"${tmp}/status" 2>&1 &&
    [[ $(grep -cE "^ *(alpha|beta) +RUNNING .* yes " "${tmp}/status") == 2 ]]
}
wait_until reporting || fatal "alpha and beta never both ran and reported: $(cat "${tmp}/status" "${tmp}/starterd.err")"
head -1 "${tmp}/status" | grep -qE "^ *NAME +STATE +PID +RESTARTS +UPTIME +CPU +MEMORY +REPORTING +LAST EXIT +MESSAGE" ||
  fail "status header: $(head -1 "${tmp}/status")"

# Stop, start and restart by command; each says the result.
"${aos_starter}" "${flags[@]}" stop beta >"${tmp}/out" 2>&1 ||
  fail "stop beta: $(cat "${tmp}/out")"
grep -q "^beta: STOPPED$" "${tmp}/out" || fail "stop beta said: $(cat "${tmp}/out")"
# The streamer names the silent one, with what the starter says; in JSON
# and /metrics too.
"${streamer}" "${flags[@]}" --silent_after_s=0.5 --duration=2.5 \
  >"${tmp}/streamed" 2>"${tmp}/streamer.err" ||
  fail "streamer: $(cat "${tmp}/streamer.err")"
grep -qE "^silent: beta: no report (for|in) [0-9]+ s; starter: STOPPED, 0 restarts$" "${tmp}/streamed" ||
  fail "the streamer does not name beta as silent: $(grep -v '^ ' "${tmp}/streamed")"
grep -q "^silent: alpha" "${tmp}/streamed" && fail "alpha is called silent: $(grep '^silent' "${tmp}/streamed")"
"${streamer}" "${flags[@]}" --silent_after_s=0.5 --duration=2.5 --format=json \
  >"${tmp}/streamed.json" 2>"${tmp}/streamer.err" ||
  fail "streamer --format=json: $(cat "${tmp}/streamer.err")"
python3 - "${tmp}/streamed.json" <<'PY' || fail "JSON liveness: $(grep applications "${tmp}/streamed.json" | head -2)"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"applications":')]
assert lines, "no liveness line"
entry = {a["application"]: a for a in lines[-1]["applications"]}
assert entry["beta"]["up"] is False and entry["beta"]["starter"]["state"] == "STOPPED", entry
assert entry["alpha"]["up"] is True, entry
PY
"${aos_starter}" "${flags[@]}" --until_reporting start beta >"${tmp}/out" 2>&1 ||
  fail "start beta: $(cat "${tmp}/out")"
grep -qE "^beta: RUNNING, reporting \(pid [0-9]+\)$" "${tmp}/out" || fail "start beta said: $(cat "${tmp}/out")"
old_pid="$(sed -E 's/.*pid ([0-9]+).*/\1/' "${tmp}/out")"
"${aos_starter}" "${flags[@]}" restart beta >"${tmp}/out" 2>&1 ||
  fail "restart beta: $(cat "${tmp}/out")"
new_pid="$(sed -E 's/.*pid ([0-9]+).*/\1/' "${tmp}/out")"
[[ -n "${new_pid}" && "${new_pid}" != "${old_pid}" ]] ||
  fail "restart beta: pid ${old_pid} -> ${new_pid}: $(cat "${tmp}/out")"

# Bad input to aos_starter: one line, exit 1.
expect_one_line_error "no application 'gamma' on this node in --config=.* \(it has alpha, beta\)" \
  "${aos_starter}" "${flags[@]}" restart gamma
expect_one_line_error "unknown command 'explode'" "${aos_starter}" "${flags[@]}" explode
expect_one_line_error "give a command" "${aos_starter}" "${flags[@]}"
expect_one_line_error "--timeout_s=0 is too short" "${aos_starter}" "${flags[@]}" --timeout_s=0 status

# SIGTERM: stopped in reverse start order (beta was started last), exit
# 0, how each ended written.
rm -f "${tmp}/stopped"
kill -TERM "${starter}"
wait "${starter}"
status=$?
[[ ${status} == 0 ]] || fail "SIGTERM: exit ${status}: $(cat "${tmp}/starterd.err")"
[[ "$(cat "${tmp}/stopped")" == $'beta\nalpha' ]] ||
  fail "stopped in this order: $(cat "${tmp}/stopped")"
[[ "$(sort "${tmp}/statuses")" == $'alpha 0\nbeta 0' ]] ||
  fail "statuses: $(cat "${tmp}/statuses")"

# SIGKILL: no application is left running.
"${starterd}" "${flags[@]}" 2>"${tmp}/starterd.err" &
starter=$!
kill_at_exit "${starter}"
wait_until reporting || fatal "after a restart of starterd, never both running: $(cat "${tmp}/status")"
pids=($(awk '$2 == "RUNNING" {print $3}' "${tmp}/status"))
[[ ${#pids[@]} == 2 ]] || fail "two pids: ${pids[*]}"
kill_at_exit "${pids[@]}"
kill -KILL "${starter}"
wait "${starter}" 2>/dev/null
all_gone() {
  local pid
  for pid in "${pids[@]}"; do
    kill -0 "${pid}" 2>/dev/null && return 1
  done
  return 0
}
wait_until all_gone || fail "applications outlived their starter: $(ps -o pid,comm -p "${pids[@]}")"

# Bad input to starterd: one line, exit 1.
expect_one_line_error "--restart_backoff_max_ms=5 is below --restart_backoff_initial_ms" \
  "${starterd}" "${flags[@]}" --restart_backoff_initial_ms=10 --restart_backoff_max_ms=5
expect_one_line_error "--config" "${starterd}" --config="${tmp}/none.json"
expect_one_line_error "unexpected|argument" "${starterd}" "${flags[@]}" extra

finish "starterd and aos_starter: every case as expected"
