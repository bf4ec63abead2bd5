#!/bin/bash
# Every JSON we print parses with a strict RFC 8259 parser (Python's json
# with NaN and Infinity refused): the streamer's lines, aos_dump's messages
# and aos_config_check's config. The first report of every application has
# statistics without samples: they must print as null, not nan.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
config="${root}/examples/pingpong_config.json"
base="$(mktemp -d /dev/shm/aos_json_XXXXXX)"
pids=()
# Asked to stop (not killed), then waited for, before their shm goes.
cleanup() {
  kill -TERM "${pids[@]}" 2>/dev/null
  wait 2>/dev/null
  rm -rf "${base}"
}
at_exit cleanup

# Reads JSON from stdin, one document per line with --lines; refuses nan.
strict() {
  python3 -c '
import json, sys
def refuse(constant):
    raise ValueError("not JSON: " + constant)
text = sys.stdin.read()
documents = text.splitlines() if sys.argv[1:] == ["--lines"] else [text]
count = 0
for document in documents:
    if document.strip():
        json.loads(document, parse_constant=refuse)
        count += 1
if count == 0:
    raise SystemExit("no JSON at all")
print(count)
' "$@"
}

# The parser itself refuses what it must.
echo '{ "a": nan }' | strict >/dev/null 2>&1 && fail "the strict parser accepted nan"

"${root}/examples/pong" --config="${config}" --shm_base="${base}" &
pids+=($!)
"${root}/examples/ping" --config="${config}" --shm_base="${base}" >/dev/null &
pids+=($!)

"${root}/aos/tools/aos_timing_report_streamer" --config="${config}" \
  --shm_base="${base}" --format=json --count=4 >"${tmp}/streamer" 2>"${tmp}/streamer.err" ||
  fail "the streamer failed: $(cat "${tmp}/streamer.err")"
lines=$(strict --lines <"${tmp}/streamer") || fail "streamer JSON is not strict: $(head -c 600 "${tmp}/streamer")"
[[ "${lines}" -ge 5 ]] || fail "the streamer printed ${lines} JSON lines, want 4 reports and summaries"
grep -q '"average": null' "${tmp}/streamer" || fail "no empty statistic printed as null"

"${root}/aos/tools/aos_dump" --config="${config}" --shm_base="${base}" \
  --count=3 /test aos.examples.Ping >"${tmp}/dump" 2>"${tmp}/dump.err" ||
  fail "aos_dump failed: $(cat "${tmp}/dump.err")"
# Each line is "<times> /test aos.examples.Ping: <JSON>".
sed 's/^[^{]*: {/{/' "${tmp}/dump" | strict --lines >/dev/null ||
  fail "aos_dump's messages are not strict JSON: $(cat "${tmp}/dump")"

"${root}/aos/tools/aos_config_check" --config="${config}" >"${tmp}/config" 2>"${tmp}/config.err" ||
  fail "aos_config_check failed: $(cat "${tmp}/config.err")"
strict <"${tmp}/config" >/dev/null || fail "aos_config_check's config is not strict JSON"

finish
