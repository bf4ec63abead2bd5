#!/bin/bash
# What the streamer says when its defaults do not fit the system: without
# --config it reads the built-in aos/aos.json, and ping's reports name
# channels that config does not have; said once, naming the config. And
# --top into a pipe: no ANSI codes, rows fitted to $COLUMNS.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
streamer="${root}/aos/tools/aos_timing_report_streamer"
ping="${root}/examples/ping"
config="${root}/examples/pingpong_config.json"
base="${tmp}/shm"
mkdir -p "${base}"

"${ping}" --config="${config}" --shm_base="${base}" --priority=0 \
  --duration=600 >/dev/null 2>&1 &
ping_pid=$!
kill_at_exit "${ping_pid}"

# No --config: ping's reports name /test, which aos/aos.json lacks.
"${streamer}" --shm_base="${base}" --count=2 --duration=120 \
  >"${tmp}/out" 2>"${tmp}/err" || fail "the streamer exited $?: $(cat "${tmp}/err")"
grep -q '<channel [0-9]*?>' "${tmp}/out" || fail "no <channel N?> row: $(cat "${tmp}/out")"
said="$(grep -c 'name channel' "${tmp}/err")"
[[ "${said}" == 1 ]] || fail "said ${said} times, want once: $(cat "${tmp}/err")"
grep -qE '^aos_timing_report_streamer: the reports of ping\[[0-9]+\] name channel [0-9]+, but the config read, the built-in aos/aos\.json \(only /aos\), as no --config was given, has 3 channels: such channels print as <channel N\?>; give the config the system runs with \(--config=' "${tmp}/err" ||
  fail "the config line: $(cat "${tmp}/err")"
# With the right config, nothing is said.
"${streamer}" --config="${config}" --shm_base="${base}" --count=1 \
  --duration=120 >"${tmp}/out" 2>"${tmp}/err" || fail "exited $?"
grep -q 'name channel' "${tmp}/err" && fail "said with the right config: $(cat "${tmp}/err")"

# --top into a pipe, 80 columns asked for.
COLUMNS=80 "${streamer}" --config="${config}" --shm_base="${base}" --top \
  --count=2 --duration=120 --accumulate=false >"${tmp}/top" 2>"${tmp}/err" ||
  fail "--top exited $?: $(cat "${tmp}/err")"
grep -q $'\x1b' "${tmp}/top" && fail "--top wrote ANSI codes into a pipe"
[[ "$(grep -c '^aos top: ' "${tmp}/top")" == 2 ]] || fail "not 2 screens: $(cat "${tmp}/top")"
awk 'length($0) > 79 { bad = 1; print } END { exit bad }' "${tmp}/top" >"${tmp}/wide" ||
  fail "--top rows wider than 79 columns at COLUMNS=80: $(cat "${tmp}/wide")"
grep -qE '^  ping\[[0-9]+\] +watcher /t.*\.\.\..*Pong ' "${tmp}/top" || fail "no watcher row: $(cat "${tmp}/top")"

finish
