#!/bin/bash
# The streamer shows paths everywhere it shows timings: on a log of timing
# reports that carry paths (path_report_log_writer; the event loops do not
# send them yet, issue 23), the table's paths section with each route (ping's
# route goes through pong, whose reports --application=ping leaves out),
# CSV rows of kind path, strict JSON with each path's percentiles and route,
# gnuplot blocks, a plot of the ages, AOS's layout without them, and the
# --max_path_age_us gate: exit 1 naming the path, 0 within it, 2 when it saw
# no path, 1 and one line for a bad value.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
streamer="${root}/aos/tools/aos_timing_report_streamer"
writer="${root}/aos/tools/path_report_log_writer"
config="${root}/examples/pingpong_config.json"
log="${tmp}/paths.mcap"

"${writer}" --config="${config}" --log="${log}" 2>"${tmp}/writer_err" ||
  fatal "path_report_log_writer: $(cat "${tmp}/writer_err")"
route='ping timer "ping" → /test aos.examples.Ping → pong → /test aos.examples.Pong → ping watcher'

# The table: a paths section in each window and in the summary.
"${streamer}" --log="${log}" --application=ping >"${tmp}/table" 2>"${tmp}/err" ||
  fail "table exited $?: $(cat "${tmp}/err")"
[[ "$(grep -c '^  paths: age of the data at callback start' "${tmp}/table")" == 4 ]] ||
  fail "not a paths section in each of 3 windows and the summary: $(cat "${tmp}/table")"
grep -qF "       2    100  1008  2982  3000      2000        50  ${route}" "${tmp}/table" ||
  fail "no path row of a window: $(cat "${tmp}/table")"
grep -qF "       2    300  1008  2982  3000      2000       150  ${route}" "${tmp}/table" ||
  fail "no path row in the summary: $(cat "${tmp}/table")"

# AOS's layout stays AOS's.
"${streamer}" --log="${log}" --format=aos >"${tmp}/aos" 2>"${tmp}/err" || fail "aos exited $?"
grep -q 'path\|→' "${tmp}/aos" && fail "--format=aos shows paths: $(cat "${tmp}/aos")"

# CSV: the same header, a row of kind path per path and window, each
# marked report.
"${streamer}" --log="${log}" --format=csv --accumulate=false >"${tmp}/csv" 2>"${tmp}/err" ||
  fail "csv exited $?: $(cat "${tmp}/err")"
[[ "$(head -1 "${tmp}/csv")" == "time_s,node,application,pid,kind,name,count,avg_us,p50_us,p99_us,max_us,missed_or_lost,window" ]] ||
  fail "CSV header: $(head -1 "${tmp}/csv")"
[[ "$(grep -c ',ping,3885755,path,"ping timer ""ping"" → .* → ping watcher",100,2000,1007.62,2981.89,3000,50,report$' "${tmp}/csv")" == 3 ]] ||
  fail "ping's path rows: $(grep ',path,' "${tmp}/csv")"
[[ "$(grep -c ',pong,3885756,path,' "${tmp}/csv")" == 3 ]] || fail "pong's path rows"

# JSON: strict, every path with its route and age percentiles. ping's
# first window comes before any of pong's: who sent the Pong is not known
# yet, and the route says so.
"${streamer}" --log="${log}" --format=json >"${tmp}/json" 2>"${tmp}/err" ||
  fail "json exited $?: $(cat "${tmp}/err")"
python3 - "${tmp}/json" "${route}" <<'PY' || fail "JSON paths: $(head -c 600 "${tmp}/json")"
import json, sys
def refuse(name):
    raise ValueError("not strict JSON: " + name)
lines = [json.loads(l, parse_constant=refuse) for l in open(sys.argv[1], encoding="utf-8")]
assert len(lines) == 8, len(lines)  # 3 windows of 2 loops, 2 summaries.
unresolved = 'ping timer "ping" → ? (1 hop) → /test aos.examples.Pong → ping watcher'
first = True
for line in lines:
    watchers = [e for e in line["percentiles"] if e["kind"] == "watcher"]
    assert len(watchers) == 1, watchers
    paths = watchers[0]["paths"]
    assert len(paths) == 1, paths
    if line["report"]["name"] == "ping":
        assert paths[0]["route"] == (unresolved if first else sys.argv[2]), paths[0]["route"]
        first = False
        assert paths[0]["hops"] == 2
        assert paths[0]["age"]["max_ns"] == 3000000, paths[0]
        count = 300 if line["accumulated"] else 100
        assert line["report"]["watchers"][0]["paths"][0]["count"] == count
PY

# The gnuplot table and the plot.
plot="${TEST_UNDECLARED_OUTPUTS_DIR:-${tmp}}/streamer.png"
"${streamer}" --log="${log}" --stream=false --accumulate=false \
  --histogram_file="${tmp}/histograms" --plot="${plot}" >/dev/null 2>"${tmp}/err" ||
  fail "--plot exited $?: $(cat "${tmp}/err")"
grep -qF "# ping[3885755] path ${route} age" "${tmp}/histograms" ||
  fail "no path block: $(grep '^#' "${tmp}/histograms")"
if [[ -x /usr/bin/gnuplot ]]; then
  grep -q "wrote ${plot%.png}_paths.png" "${tmp}/err" || fail "no path plot: $(cat "${tmp}/err")"
  [[ "$(head -c 4 "${plot%.png}_paths.png" | tail -c 3)" == PNG ]] || fail "the path plot is no PNG"
fi

# The gate.
"${streamer}" --log="${log}" --stream=false --accumulate=false \
  --max_path_age_us=2500 >/dev/null 2>"${tmp}/err"
status=$?
[[ ${status} == 1 && "$(wc -l <"${tmp}/err")" == 1 ]] ||
  fail "--max_path_age_us=2500 exited ${status}: $(cat "${tmp}/err")"
grep -qF "FAILED: ping[3885755] path ${route} (2 hops): got data 3000 us old, more than --max_path_age_us=2500" "${tmp}/err" ||
  fail "gate message: $(cat "${tmp}/err")"
"${streamer}" --log="${log}" --stream=false --accumulate=false \
  --max_path_age_us=3500 >/dev/null 2>"${tmp}/err" ||
  fail "--max_path_age_us=3500 exited $?: $(cat "${tmp}/err")"
"${streamer}" --log="${log}" --stream=false --accumulate=false \
  --application=nobody --max_path_age_us=3500 >/dev/null 2>"${tmp}/err"
status=$?
[[ ${status} == 2 ]] && grep -q -- '--max_path_age_us: no timing report matched the filters, so nothing was checked (exit 2)' "${tmp}/err" ||
  fail "a gate that saw nothing exited ${status}: $(cat "${tmp}/err")"
for bad in -1 nan abc; do
  "${streamer}" --log="${log}" --max_path_age_us="${bad}" >/dev/null 2>"${tmp}/err"
  status=$?
  [[ ${status} == 1 && "$(wc -l <"${tmp}/err")" == 1 ]] && grep -q 'max_path_age_us' "${tmp}/err" ||
    fail "--max_path_age_us=${bad} exited ${status}: $(cat "${tmp}/err")"
done

finish
