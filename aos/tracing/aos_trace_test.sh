#!/bin/bash
# aos_trace on a real ping and pong: a storm of triggers (every wakeup over
# a 1 us threshold) gives rate-limited snapshots of both rings that count
# the triggers they suppressed; a snapshot skips a ring that is no ring,
# counting it; with --sched_switch (as root) a CPU track shows ping running
# and no tracefs instance is left; plot draws a PNG; list and prune; bad
# input is one line and exit 1. Counts only: nothing here asserts how fast
# anything is.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
trace="${root}/aos/tracing/aos_trace"
config="${root}/examples/pingpong_config.json"
shm="${tmp}/shm"
out="${tmp}/out"
mkdir -p "${out}"

"${root}/examples/pong" --config="${config}" --shm_base="${shm}" \
  --priority=0 >"${tmp}/pong.log" 2>&1 &
kill_at_exit $!
"${root}/examples/ping" --config="${config}" --shm_base="${shm}" \
  --priority=0 --sleep_ms=2 --trace_wakeup_threshold_us=1 \
  >"${tmp}/ping.log" 2>&1 &
kill_at_exit $!
wait_until bash -c "ls '${shm}/aos_trace' | grep -q ping" ||
  fatal "no ping ring under ${shm}/aos_trace"
wait_until bash -c "ls '${shm}/aos_trace' | grep -q pong" ||
  fatal "no pong ring under ${shm}/aos_trace"

"${trace}" --shm_base="${shm}" record --out="${out}" --snapshots=2 \
  --min_interval_ms=300 --before_ms=50 --after_ms=20 >"${tmp}/record.log" ||
  fail "record exited $?: $(cat "${tmp}/record.log")"
[[ $(grep -c '2 rings (0 skipped)' "${tmp}/record.log") == 2 ]] ||
  fail "record did not write 2 snapshots of both rings: $(cat "${tmp}/record.log")"
grep -q 'ping: wakeup latency' "${tmp}/record.log" ||
  fail "no snapshot names ping's trigger: $(cat "${tmp}/record.log")"
# The second snapshot comes after a storm of triggers it suppressed.
last="$("${trace}" list "${out}" | tail -n 1)"
python3 - "${last}" <<'PY' || fail "the second snapshot does not count suppressed triggers"
import json, sys
data = json.load(open(sys.argv[1]))["otherData"]
sys.exit(0 if data["suppressed_snapshots"] > 0 else 1)
PY

# With --config, record is a loop of its own and sends each snapshot on
# /aos as an aos.tracing.TraceSnapshot, which a logger keeps in its log.
# shellcheck source=aos/testing/wait_for_reports.sh
source "${root}/aos/testing/wait_for_reports.sh"
logger="${root}/aos/events/logging/aos_logger"
dump="${root}/aos/tools/aos_dump"
log="${tmp}/snapshots.mcap"
"${logger}" --config="${config}" --shm_base="${shm}" --log_file="${log}" \
  --flush_period_ms=100 2>"${tmp}/logger.err" &
logger_pid=$!
kill_at_exit "${logger_pid}"
wait_for_reports "${dump}" "${log}" 1 aos_logger || fatal "the logger records nothing"
"${trace}" --config="${config}" --shm_base="${shm}" record --out="${out}" \
  --snapshots=1 --before_ms=50 --after_ms=20 >"${tmp}/config_record.log" 2>&1 ||
  fail "record --config exited $?: $(cat "${tmp}/config_record.log")"
grep -q 'sent on /aos ([1-9][0-9]* events, [0-9]* left out)' "${tmp}/config_record.log" ||
  fail "record --config sent no snapshot: $(cat "${tmp}/config_record.log")"
grep -q 'other nodes are not asked' "${tmp}/config_record.log" &&
  fail "a single-node record talks of other nodes: $(cat "${tmp}/config_record.log")"
kill -TERM "${logger_pid}"
wait "${logger_pid}" || fail "the logger exited $?: $(cat "${tmp}/logger.err")"
"${dump}" --log="${log}" /aos aos.tracing.TraceSnapshot >"${tmp}/logged" 2>&1 ||
  fail "aos_dump of the log: $(cat "${tmp}/logged")"
grep -q '"reason": "ping: wakeup latency"' "${tmp}/logged" ||
  fail "no snapshot in the log: $(head -c 2000 "${tmp}/logged")"
grep -q '"application": "pong"' "${tmp}/logged" ||
  fail "the logged snapshot has no pong ring: $(head -c 2000 "${tmp}/logged")"
# from-log writes it as a file again: the same handler runs as the file
# record wrote.
mkdir -p "${tmp}/fromlog"
"${trace}" from-log "${log}" --out="${tmp}/fromlog" >"${tmp}/fromlog.out" 2>&1 ||
  fail "from-log exited $?: $(cat "${tmp}/fromlog.out")"
grep -q 'from-log: 1 snapshots written, 0 refused' "${tmp}/fromlog.out" ||
  fail "from-log: $(cat "${tmp}/fromlog.out")"
written="$(sed -n 's/: [0-9]* rings (0 skipped).*sent on .*//p' "${tmp}/config_record.log")"
python3 - "${written}" "$("${trace}" list "${tmp}/fromlog")" <<'PY' || fail "from-log's snapshot differs from the file: $(cat "${tmp}/fromlog.out")"
import json, sys
def runs(path):
    return sorted((e["name"], e["ts"]) for e in json.load(open(path))["traceEvents"] if e["ph"] == "X")
assert runs(sys.argv[1]) == runs(sys.argv[2]), (len(runs(sys.argv[1])), len(runs(sys.argv[2])))
PY
expect_one_line_error 'no_such.mcap' "${trace}" from-log "${tmp}/no_such.mcap"
# It was sent once and the list shows its file.
[[ $(grep -c 'aos.tracing.TraceSnapshot: {' "${tmp}/logged") == 1 ]] ||
  fail "not one snapshot message: $(grep -c 'aos.tracing.TraceSnapshot: {' "${tmp}/logged")"

# --disk_budget_mb: the oldest snapshots go, never the newest. Here a
# budget of 1 MiB with a 2 MiB file already in the directory.
budget="${tmp}/budget"
mkdir -p "${budget}"
head -c $((2 << 20)) /dev/zero >"${budget}/aos_trace.00000000000000000001.json"
"${trace}" --shm_base="${shm}" record --out="${budget}" --snapshots=2 \
  --min_interval_ms=100 --before_ms=20 --after_ms=10 --disk_budget_mb=1 \
  >"${tmp}/budget.log" 2>&1 || fail "record --disk_budget_mb exited $?: $(cat "${tmp}/budget.log")"
grep -q 'removed 1 older snapshots (--disk_budget_mb=1)' "${tmp}/budget.log" ||
  fail "the budget removed nothing: $(cat "${tmp}/budget.log")"
[[ ! -e "${budget}/aos_trace.00000000000000000001.json" ]] || fail "the oldest was kept"
[[ $("${trace}" list "${budget}" | wc -l) == 2 ]] || fail "budget: $("${trace}" list "${budget}")"
expect_one_line_error 'disk_budget_mb=-1 is not' "${trace}" --disk_budget_mb=-1 record

# The streamer's --max_wakeup_latency_us, with --snapshot_dir: each report
# over it is a snapshot of its window. Every wakeup is over 1 us.
streamer="${root}/aos/tools/aos_timing_report_streamer"
streamed="${tmp}/streamed"
mkdir -p "${streamed}"
"${streamer}" --config="${config}" --shm_base="${shm}" --count=2 \
  --max_wakeup_latency_us=1 --snapshot_dir="${streamed}" \
  >/dev/null 2>"${tmp}/streamer.err"
status=$?
[[ ${status} == 1 ]] || fail "the streamer's gate exited ${status}, want 1: $(cat "${tmp}/streamer.err")"
grep -q 'aos_timing_report_streamer: [1-9][0-9]* snapshot(s) written to' "${tmp}/streamer.err" ||
  fail "the streamer wrote no snapshot: $(cat "${tmp}/streamer.err")"
first="$("${trace}" list "${streamed}" | head -n 1)"
python3 - "${first}" <<'PY' || fail "the streamer's snapshot: $(head -c 600 "${first}")"
import json, sys
trace = json.load(open(sys.argv[1]))
other = trace["otherData"]
assert other["reason"].startswith("aos_timing_report_streamer: "), other
assert "over --max_wakeup_latency_us=1" in other["reason"], other
assert other["window_begin_ns"] <= other["trigger_ns"] <= other["window_end_ns"], other
names = [e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name"]
assert any(n.startswith("ping (pid ") for n in names), names
PY
expect_one_line_error 'snapshot_dir snapshots reports over --max_wakeup_latency_us' \
  "${streamer}" --config="${config}" --shm_base="${shm}" --snapshot_dir="${streamed}"
expect_one_line_error "snapshot_dir=${tmp}/nowhere: no such directory" \
  "${streamer}" --config="${config}" --shm_base="${shm}" --max_wakeup_latency_us=5 \
  --snapshot_dir="${tmp}/nowhere"

# A file that is no ring, named for a live process: skipped and counted.
echo "not a ring" >"${shm}/aos_trace/-.junk.$$"
"${trace}" --shm_base="${shm}" snapshot --out="${out}" --after_ms=0 \
  >"${tmp}/snapshot.log" 2>"${tmp}/snapshot.err" ||
  fail "snapshot exited $?: $(cat "${tmp}/snapshot.err")"
grep -q '2 rings (1 skipped)' "${tmp}/snapshot.log" ||
  fail "the junk ring was not skipped: $(cat "${tmp}/snapshot.log")"
grep -q 'junk.*less than a ring header' "${tmp}/snapshot.err" ||
  fail "the skipped ring is not named: $(cat "${tmp}/snapshot.err")"

# plot: a timeline PNG of a snapshot (gnuplot), next to it unless --png.
if [[ -x /usr/bin/gnuplot ]]; then
  "${trace}" plot "${last}" >"${tmp}/plot.log" 2>&1 ||
    fail "plot exited $?: $(cat "${tmp}/plot.log")"
  head -c 4 "${last%.json}.png" | grep -q PNG || fail "plot wrote no PNG: $(cat "${tmp}/plot.log")"
  grep -q "tracks, .* runs" "${tmp}/plot.log" || fail "plot said: $(cat "${tmp}/plot.log")"
  rm -f "${last%.json}.png"
else
  echo "SKIP plot: gnuplot is not installed"
fi
expect_one_line_error "${tmp}/junk.json: .*" "${trace}" plot "${tmp}/junk.json"
expect_one_line_error 'plot_from_ms=2 is not before --plot_to_ms=1' "${trace}" plot "${last}" --plot_from_ms=2 --plot_to_ms=1
expect_one_line_error 'plot: give one snapshot file' "${trace}" plot

[[ $("${trace}" list "${out}" | wc -l) == 4 ]] || fail "list: $("${trace}" list "${out}")"
"${trace}" prune "${out}" --keep=1 | grep -q 'removed 3 snapshots' || fail "prune"
[[ $("${trace}" list "${out}" | wc -l) == 1 ]] || fail "prune kept too many"

# --sched_switch: the kernel's switches on the loops' CPU, in a tracefs
# instance of aos_trace's own, removed when it ends (by SIGTERM too).
tracefs=/sys/kernel/tracing
if [[ "$(id -u)" != 0 ]]; then
  echo "SKIP --sched_switch: not root, no tracefs instance can be made"
elif [[ ! -d "${tracefs}/instances" ]]; then
  echo "SKIP --sched_switch: no tracefs at ${tracefs}"
else
  ping_pid="$(ls "${shm}/aos_trace" | sed -n 's/^-\.ping\.//p' | head -n 1)"
  # Its own instance only: other tests may trace beside this one.
  "${trace}" --shm_base="${shm}" --sched_switch snapshot --out="${out}" \
    --before_ms=0 --after_ms=200 >"${tmp}/sched.log" 2>&1 &
  snapshotter=$!
  wait "${snapshotter}" ||
    fail "snapshot --sched_switch exited $?: $(cat "${tmp}/sched.log")"
  grep -q ' kernel events (' "${tmp}/sched.log" ||
    fail "no kernel events counted: $(cat "${tmp}/sched.log")"
  snapshot="$(sed -n 's/: 2 rings.*//p' "${tmp}/sched.log")"
  python3 - "${snapshot}" "${ping_pid}" <<'PY' || fail "the snapshot has no CPU track with ping on it: $(cat "${tmp}/sched.log")"
import json, sys
trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
kernel = [e["pid"] for e in events if e["ph"] == "M" and e["args"]["name"] == "kernel: CPUs"]
assert len(kernel) == 1, kernel
cpus = [e for e in events if e["pid"] == kernel[0] and e["name"] == "thread_name"]
assert cpus and all(e["args"]["name"].startswith("CPU ") for e in cpus), cpus
ping = [e for e in events if e["pid"] == kernel[0] and e["ph"] == "X" and e["args"]["pid"] == int(sys.argv[2])]
assert ping and ping[0]["name"].startswith("ping (pid "), ping[:1]
assert trace["otherData"]["kernel_sched_events"] > 0, trace["otherData"]
PY
  [[ -e "${tracefs}/instances/aos_trace.${snapshotter}" ]] &&
    fail "snapshot left its tracefs instance: $(ls "${tracefs}/instances")"
  "${trace}" --shm_base="${shm}" --sched_switch record --out="${out}" \
    >"${tmp}/sched_record.log" 2>&1 &
  recorder=$!
  wait_until test -d "${tracefs}/instances/aos_trace.${recorder}" ||
    fail "record --sched_switch made no instance"
  kill -TERM "${recorder}"
  wait "${recorder}" || fail "record --sched_switch exited $? on SIGTERM"
  [[ -e "${tracefs}/instances/aos_trace.${recorder}" ]] &&
    fail "record left its tracefs instance after SIGTERM"
fi
expect_one_line_error 'sched_buffer_kb=1 is not' "${trace}" --sched_buffer_kb=1 --sched_switch snapshot

expect_one_line_error 'no such directory' "${trace}" --out="${tmp}/missing" snapshot
expect_one_line_error 'cannot list it' "${trace}" list "${tmp}/missing"
expect_one_line_error 'unknown command' "${trace}" frobnicate
expect_one_line_error 'give a command' "${trace}"
expect_one_line_error 'poll_ms=0 is not' "${trace}" --poll_ms=0 record
finish
