#!/bin/bash
# aos_dump --log says where a forwarded message was first sent: on a log of
# pi2 (mcap_check_log_writer's two-node run), every line of a channel pi1
# forwards to pi2 names pi1 and the message's send times, queue index and
# boot there, as LogFileReader reads them from the log's remote records
# (forwarded_log_test checks those against what was sent); a channel sent
# on pi2 itself has none of that. Channel names go through pi2's maps and
# types may be partial, as in AOS's aos_dump.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
dump="${root}/aos/tools/aos_dump"
writer="${root}/aos/events/logging/mcap_check_log_writer"

(cd "${root}" && "${writer}" --dir="${tmp}") >"${tmp}/writer.log" 2>&1 ||
  fatal "mcap_check_log_writer failed: $(tail -5 "${tmp}/writer.log")"
log="${tmp}/multinode.mcap"

"${dump}" --log="${log}" /test aos.examples.Ping >"${tmp}/forwarded" \
  2>"${tmp}/forwarded.err" || fatal "aos_dump failed: $(cat "${tmp}/forwarded.err")"
"${dump}" --log="${log}" /test aos.examples.Pong >"${tmp}/local" \
  2>"${tmp}/local.err" || fatal "aos_dump failed: $(cat "${tmp}/local.err")"

# As AOS's aos_dump: /aos goes through pi2's maps to /pi2/aos, and a type
# may be part of one; an ambiguous one is one line naming the candidates.
"${dump}" --log="${log}" --count=1 /aos Report >"${tmp}/mapped" \
  2>"${tmp}/mapped.err" || fail "aos_dump /aos Report failed: $(cat "${tmp}/mapped.err")"
grep -q '^[^ ]* ([^)]*) /pi2/aos aos\.timing\.Report: {' "${tmp}/mapped" ||
  fail "/aos Report did not print /pi2/aos reports: $(head -c 300 "${tmp}/mapped")"
"${dump}" --log="${log}" /test Ping >"${tmp}/partial" 2>"${tmp}/partial.err" ||
  fail "aos_dump /test Ping failed: $(cat "${tmp}/partial.err")"
cmp -s "${tmp}/partial" "${tmp}/forwarded" || fail "/test Ping printed other lines than the full type"
status=0
"${dump}" --log="${log}" /test examples >"${tmp}/ambiguous" 2>"${tmp}/ambiguous.err" || status=$?
[[ ${status} == 1 ]] || fail "an ambiguous type exited ${status}"
[[ "$(cat "${tmp}/ambiguous.err")" == "aos_dump: several channels named /test have a type containing examples; give more of the type: /test aos.examples.Ping, /test aos.examples.Pong" ]] ||
  fail "ambiguous type: $(cat "${tmp}/ambiguous.err")"

# The Python prints its own FAIL line, and on success the summary finish ends
# with.
summary="$(python3 - "${tmp}/multinode_expected.json" "${tmp}/forwarded" "${tmp}/local" <<'PY'
import json, re, sys, time

expected = {c["type"]: c for c in json.load(open(sys.argv[1]))}
forwarded = open(sys.argv[2]).read().splitlines()
local = open(sys.argv[3]).read().splitlines()

def fail(message):
    print("FAIL: " + message, file=sys.stderr)
    sys.exit(1)

def seconds(ns):
    ns = int(ns)
    return "%d.%09dsec" % (ns // 1000000000, ns % 1000000000)

def date(ns):
    # aos prints realtime in UTC: 2026-01-01_00-00-00.010000000.
    ns = int(ns)
    return time.strftime("%Y-%m-%d_%H-%M-%S", time.gmtime(ns // 1000000000)) + \
        ".%09d" % (ns % 1000000000)

remote = expected["aos.examples.Ping"]["remote"]
count = len(remote["monotonic_remote_times"])
if count < 2 or len(forwarded) != count:
    fail("%d lines for %d forwarded messages" % (len(forwarded), count))
line = re.compile(r"^(\S+) \((\S+)\) /test aos\.examples\.Ping from pi1 "
                  r"\(sent there (\S+) \((\S+)\), queue index (\d+), boot (\S+)\): \{")
for i, text in enumerate(forwarded):
    match = line.match(text)
    if not match:
        fail("line %d does not say where it was sent: %s" % (i, text[:200]))
    if match.group(3) != seconds(remote["monotonic_remote_times"][i]):
        fail("line %d: monotonic remote time %s, expected %s" %
             (i, match.group(3), seconds(remote["monotonic_remote_times"][i])))
    if match.group(5) != remote["remote_queue_indexes"][i]:
        fail("line %d: remote queue index %s, expected %s" %
             (i, match.group(5), remote["remote_queue_indexes"][i]))
    if match.group(6) != remote["source_boot_uuids"][i]:
        fail("line %d: boot %s, expected %s" %
             (i, match.group(6), remote["source_boot_uuids"][i]))
    if match.group(1) != seconds(expected["aos.examples.Ping"]["log_times"][i]):
        fail("line %d: local time %s" % (i, match.group(1)))
    if match.group(4) != date(remote["realtime_remote_times"][i]):
        fail("line %d: realtime remote time %s, expected %s" %
             (i, match.group(4), date(remote["realtime_remote_times"][i])))
    if match.group(2) != date(expected["aos.examples.Ping"]["publish_times"][i]):
        fail("line %d: local realtime %s" % (i, match.group(2)))

replies = len(expected["aos.examples.Pong"]["log_times"])
if replies < 2 or len(local) != replies:
    fail("%d lines for %d local messages" % (len(local), replies))
for text in local:
    if " from " in text.split(": {")[0]:
        fail("a local message names a source node: %s" % text[:200])
print("PASS: %d forwarded lines name pi1 and their remote times; %d local lines do not"
      % (count, replies))
PY
)" || fail "the lines of /test do not match what was sent"
finish "${summary:-PASS}"
