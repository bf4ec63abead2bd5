#!/bin/bash
# aos_config_check and config_flattener as a user runs them: exit codes,
# stdout/stderr, and messages that name the culprit.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
check="${root}/aos/tools/aos_config_check"
flattener="${root}/aos/config_flattener"

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

# No --config: one line naming the flag, exit 1, as every bad flag.
"${check}" >"${tmp}/out" 2>"${tmp}/err"
[[ $? == 1 ]] || fail "missing --config should exit 1"
[[ $(wc -l <"${tmp}/err") == 1 ]] || fail "missing --config is not one line"
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

# --node: what one node sends, receives and runs, instead of the config.
multinode="${root}/examples/multinode_pingpong_config.json"
"${check}" --config="${multinode}" --node=pi2 >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "--node=pi2 exited ${status}: $(cat "${tmp}/err")"
grep -q '^node pi2 (hostname pi2, port 9971)$' "${tmp}/out" || fail "--node=pi2 header: $(cat "${tmp}/out")"
grep -q '^    /test aos.examples.Pong -> pi1 (reliable)$' "${tmp}/out" || fail "--node=pi2 does not send Pong reliably to pi1: $(cat "${tmp}/out")"
grep -q '^    /test aos.examples.Ping <- pi1$' "${tmp}/out" || fail "--node=pi2 does not receive Ping from pi1: $(cat "${tmp}/out")"
grep -q '^    /pi2/aos aos.timing.Report -> pi1 (best effort, time to live 500 ms)$' "${tmp}/out" || fail "--node=pi2 reports: $(cat "${tmp}/out")"
grep -q '^  applications (3): aos_trace, message_bridge, pong$' "${tmp}/out" || fail "--node=pi2 applications: $(cat "${tmp}/out")"
"${check}" --config="${multinode}" --node=pi7 >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "--node=pi7 exited ${status}, want 1"
[[ "$(cat "${tmp}/err")" == "aos_config_check: --node=pi7 is not a node of ${multinode} (its nodes: pi1, pi2)" ]] ||
  fail "--node=pi7 message: $(cat "${tmp}/err")"

# The output is a fixed point: read back, it prints the same, NaN defaults
# of embedded schemas (a timing report's statistics) included, which print
# as the string "nan" (strict JSON) rather than null (read back as 0).
for config in "${root}/examples/pingpong_config.json" "${multinode}" \
  "${root}/aos/testing/test_channels.json"; do
  "${check}" --config="${config}" >"${tmp}/once.json" 2>"${tmp}/err" ||
    fail "$(basename "${config}"): $(cat "${tmp}/err")"
  "${check}" --config="${tmp}/once.json" >"${tmp}/twice.json" 2>"${tmp}/err" ||
    fail "$(basename "${config}") printed does not read back: $(cat "${tmp}/err")"
  cmp -s "${tmp}/once.json" "${tmp}/twice.json" ||
    fail "$(basename "${config}") printed, read back and printed differs: $(diff "${tmp}/once.json" "${tmp}/twice.json" | head -6)"
  grep -q 'null' "${tmp}/once.json" && fail "$(basename "${config}") prints null"
done
"${check}" --config="${root}/examples/pingpong_config.json" >"${tmp}/once.json"
grep -q '"default_real": "nan"' "${tmp}/once.json" ||
  fail "no NaN default printed as \"nan\" in the ping/pong config"

# Long culprits are elided, with their length said: an import path of a
# million characters is not echoed whole.
long="$(head -c 1000000 /dev/zero | tr '\0' 'a')"
printf '{ "imports": [ "%s.json" ] }\n' "${long}" >"${tmp}/long_import.json"
"${check}" --config="${tmp}/long_import.json" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "a long import exited ${status}, want 1"
(($(wc -c <"${tmp}/err") < 2000)) || fail "a long import's message is $(wc -c <"${tmp}/err") bytes"
grep -q '(1000[0-9]* bytes)' "${tmp}/err" || fail "a long import's length is not said: $(head -c 600 "${tmp}/err")"
[[ $(wc -l <"${tmp}/err") == 1 ]] || fail "a long import's message is not one line"
# A channel name of a megabyte, and control characters in a type.
printf '{ "channels": [ { "name": "/%s", "type": "T\\u001b[2J", "max_size": 0 } ] }\n' \
  "${long}" >"${tmp}/long_name.json"
"${check}" --config="${tmp}/long_name.json" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "a long channel name exited ${status}, want 1"
(($(wc -c <"${tmp}/err") < 2000)) || fail "a long name's message is $(wc -c <"${tmp}/err") bytes"
grep -qF '"T\x1b[2J"' "${tmp}/err" || fail "the type is not escaped: $(head -c 600 "${tmp}/err")"
LC_ALL=C grep -q '[^[:print:]]' "${tmp}/err" && fail "control bytes in: $(od -c "${tmp}/err" | head -3)"

finish "all aos_config_check checks passed"
