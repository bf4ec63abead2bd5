#!/bin/bash
# aos_config_check and config_flattener as a user runs them: exit codes,
# stdout/stderr, and messages that name the culprit.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
check="${root}/aos/tools/aos_config_check"
flattener="${root}/aos/config_flattener"
tmp="${TEST_TMPDIR}"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# A good config: flattened JSON on stdout, nothing on stderr, exit 0.
"${check}" --config="${root}/aos/testing/test_channels.json" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "good config exited ${status}: $(cat "${tmp}/err")"
[[ ! -s "${tmp}/err" ]] || fail "good config wrote to stderr: $(cat "${tmp}/err")"
grep -q '"name": "/aos"' "${tmp}/out" || fail "imported /aos channel missing from output"
grep -q '"type": "aos.testing.TestReply"' "${tmp}/out" || fail "/test Pong missing from output"
grep -q '"imports"' "${tmp}/out" && fail "flattened output still has imports"

# A bad config: nothing on stdout, the file and channel on stderr, exit 1.
cat >"${tmp}/bad.json" <<'JSON'
{ "channels": [ { "name": "/a", "type": "T", "max_size": 0 } ] }
JSON
"${check}" --config="${tmp}/bad.json" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "bad config exited ${status}, want 1"
[[ ! -s "${tmp}/out" ]] || fail "bad config printed to stdout"
grep -q 'bad.json: channel "/a" (type T): max_size 0 must be positive' "${tmp}/err" ||
  fail "message does not name file, channel and field: $(cat "${tmp}/err")"

# An import that is not a regular file, and a file over --max_file_bytes:
# one line naming the path, exit 1, no exception.
cat >"${tmp}/dir_import.json" <<'JSON'
{ "imports": [ "/" ] }
JSON
"${check}" --config="${tmp}/dir_import.json" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "directory import exited ${status}, want 1"
[[ "$(cat "${tmp}/err")" == "aos_config_check: ${tmp}/dir_import.json: import /: is a directory, not a regular file" ]] ||
  fail "directory import message: $(cat "${tmp}/err")"
"${check}" --config="${tmp}/dir_import.json" --max_file_bytes=5 >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "too large a config exited ${status}, want 1"
grep -q "dir_import.json: is 23 bytes, more than the limit of 5 bytes" "${tmp}/err" ||
  fail "size limit message: $(cat "${tmp}/err")"
[[ $(wc -l <"${tmp}/err") == 1 ]] || fail "size limit message is not one line"

# No --config: usage error, exit 2.
"${check}" >"${tmp}/out" 2>"${tmp}/err"
[[ $? == 2 ]] || fail "missing --config should exit 2"
grep -q -- "--config=FILE is required" "${tmp}/err" || fail "missing --config not explained"

# --help: usage and our flags, not glog's.
"${check}" --help >"${tmp}/out" 2>&1
[[ $? == 0 ]] || fail "--help exited non-zero"
grep -q -- "--config" "${tmp}/out" || fail "--help does not list --config"
grep -q -- "alsologtostderr" "${tmp}/out" && fail "--help lists glog's flags"

# The flattener (what aos_config runs) fails by name on a type without schema.
cat >"${tmp}/noschema.json" <<'JSON'
{ "channels": [ { "name": "/test", "type": "aos.testing.TestMessage" },
                { "name": "/test", "type": "aos.testing.Missing" } ] }
JSON
"${flattener}" --config="${tmp}/noschema.json" --out_json="${tmp}/o.json" \
  --out_bfbs="${tmp}/o.bfbs" "${root}/aos/testing/test_message.bfbs" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "flattener with a missing schema exited ${status}, want 1"
grep -q 'channel "/test" has type "aos.testing.Missing"' "${tmp}/err" ||
  fail "flattener does not name the channel without schema: $(cat "${tmp}/err")"

if ((failures > 0)); then
  echo "${failures} check(s) failed" >&2
  exit 1
fi
echo "all aos_config_check checks passed"
