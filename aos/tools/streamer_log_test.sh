#!/bin/bash
# aos_timing_report_streamer --log: the same reports from an MCAP log that
# it shows live (aos_logger recorded a short ping/pong run), as strict JSON,
# CSV and the table with its summary; filters apply; misuse is one line.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
streamer="${root}/aos/tools/aos_timing_report_streamer"
logger="${root}/aos/events/logging/aos_logger"
dump="${root}/aos/tools/aos_dump"
ping="${root}/examples/ping"
pong="${root}/examples/pong"
config="${root}/examples/pingpong_config.json"
base="${tmp}/shm"
log="${tmp}/run.mcap"
mkdir -p "${base}"
# shellcheck source=aos/testing/wait_for_reports.sh
source "${root}/aos/testing/wait_for_reports.sh"

common=(--config="${config}" --shm_base="${base}")
"${logger}" "${common[@]}" --log_file="${log}" --flush_period_ms=100 \
  2>"${tmp}/logger_err" &
logger_pid=$!
"${pong}" "${common[@]}" --priority=0 2>/dev/null &
pong_pid=$!
kill_at_exit "${logger_pid}" "${pong_pid}"
# A report of pong's in the log: the logger records and pong runs, so every
# report ping sends from now on is recorded.
wait_for_reports "${dump}" "${log}" 1 pong ||
  fatal "no report of pong's recorded; aos_logger said: $(cat "${tmp}/logger_err")"
# Five seconds: four or five of ping's one-second report windows.
"${ping}" "${common[@]}" --priority=0 --duration=5 >/dev/null 2>&1
# On SIGTERM the logger records what was sent since its last poll
# (Logger::Finish), so ping's last report is in the log.
kill -TERM "${pong_pid}" "${logger_pid}"
wait "${logger_pid}" || fail "aos_logger failed: $(cat "${tmp}/logger_err")"

# JSON: strict, every line a report (or a silent applications' line);
# ping's windows, then the summaries.
"${streamer}" --log="${log}" --format=json >"${tmp}/json" 2>"${tmp}/err" ||
  fail "--format=json exited $?: $(cat "${tmp}/err")"
python3 - "${tmp}/json" <<'PY' || fail "JSON from the log: $(head -c 400 "${tmp}/json")"
import json, sys
def refuse(name):
    raise ValueError("not strict JSON: " + name)
lines = [json.loads(l, parse_constant=refuse) for l in open(sys.argv[1])]
# Silent applications' lines (docs/streamer.md) are not reports.
liveness = [l for l in lines if "applications" in l]
for l in liveness:
    assert all({"node", "application", "up", "seconds_since_report",
                "starter"} <= set(a) for a in l["applications"]), l
lines = [l for l in lines if "applications" not in l]
windows = [l for l in lines if not l.get("accumulated")]
summaries = [l for l in lines if l.get("accumulated")]
names = {l["report"]["name"] for l in windows}
assert {"ping", "pong"} <= names, names
assert sum(1 for l in windows if l["report"]["name"] == "ping") >= 2
assert {l["report"]["name"] for l in summaries} >= {"ping", "pong"}
PY

# CSV: a header, then rows of 13 fields, ping's timer among them; the
# summary's rows are marked in the last column (window), so the recipe in
# docs/logging.md plots the windows alone.
"${streamer}" --log="${log}" --format=csv --application=ping >"${tmp}/csv" 2>"${tmp}/err" ||
  fail "--format=csv exited $?: $(cat "${tmp}/err")"
[[ "$(head -1 "${tmp}/csv")" == "time_s,node,application,pid,kind,name,count,avg_us,p50_us,p99_us,max_us,missed_or_lost,window" ]] ||
  fail "CSV header: $(head -1 "${tmp}/csv")"
awk -F, 'NR > 1 && NF != 13 { bad = 1 } END { exit bad }' "${tmp}/csv" || fail "a CSV row without 13 fields"
reports="$(grep -c ',report$' "${tmp}/csv")"
summaries="$(grep -c ',summary$' "${tmp}/csv")"
((reports > 0 && summaries > 0 && reports + summaries + 1 == $(wc -l <"${tmp}/csv"))) ||
  fail "rows not marked report or summary: $(cat "${tmp}/csv")"
# The summary's rows come last.
[[ "$(tail -n "${summaries}" "${tmp}/csv" | grep -vc ',summary$')" == 0 ]] ||
  fail "summary rows before report rows: $(cat "${tmp}/csv")"
# docs/logging.md's recipe: one row per window of ping's timer, no summary.
awk -F, '$5 == "timer" && $6 == "ping" && $NF == "report"' "${tmp}/csv" >"${tmp}/ping_timer.csv"
windows="$(grep -c '^[0-9.e+]*,,ping,[0-9]*,timer,ping,.*,report$' "${tmp}/csv")"
[[ "$(wc -l <"${tmp}/ping_timer.csv")" == "${windows}" ]] && ((windows >= 2)) ||
  fail "the recipe's rows: $(cat "${tmp}/ping_timer.csv")"
grep -q '^[0-9.e+]*,,ping,[0-9]*,timer,ping,' "${tmp}/csv" || fail "no row for ping's timer: $(head -5 "${tmp}/csv")"
grep -q ',pong,' "${tmp}/csv" && fail "--application=ping let pong through"

# The table, with the summary.
"${streamer}" --log="${log}" >"${tmp}/table" 2>"${tmp}/err" || fail "table exited $?"
grep -q '^ping\[[0-9]*\]' "${tmp}/table" || fail "no ping report in the table"
grep -q '^Summary: every report of each application added up' "${tmp}/table" || fail "no summary"

# Misuse: one line, exit 1.
"${streamer}" --log="${tmp}/missing.mcap" >/dev/null 2>"${tmp}/err"
[[ $? == 1 && "$(wc -l <"${tmp}/err")" == 1 ]] || fail "missing log: $(cat "${tmp}/err")"
grep -q "^aos_timing_report_streamer: --log: .*missing.mcap" "${tmp}/err" || fail "missing log message: $(cat "${tmp}/err")"
"${streamer}" --log="${log}" --duration=5 >/dev/null 2>"${tmp}/err"
[[ $? == 1 && "$(cat "${tmp}/err")" == "aos_timing_report_streamer: --duration watches live reports; drop it with --log" ]] ||
  fail "--duration with --log: $(cat "${tmp}/err")"

finish "all streamer --log checks passed"
