#!/bin/bash
# aos_logger as users run it, on real shared memory: it records its own
# timing reports (the framework config has only /aos) with their path
# origins (aos_dump -v, live and from the log); a SIGKILLed logger
# leaves a log whose finished chunks aos_dump --log reads; SIGTERM finishes
# the file; bad paths and flags are one line naming them, exit 1.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
logger="${root}/aos/events/logging/aos_logger"
dump="${root}/aos/tools/aos_dump"
config="${root}/aos/aos_config.json"
base="$(mktemp -d /dev/shm/aos_logger_test.XXXXXX)" || fatal "no directory in /dev/shm"
at_exit 'rm -rf "${base}"'

# shellcheck source=aos/testing/wait_for_reports.sh
source "${root}/aos/testing/wait_for_reports.sh"

# A logger killed with SIGKILL: the chunks it wrote out are all readable.
killed="${tmp}/killed.mcap"
"${logger}" --config="${config}" --shm_base="${base}" --log_file="${killed}" \
  --flush_period_ms=100 2>"${tmp}/killed.err" &
pid=$!
kill_at_exit "${pid}"
wait_for_reports "${dump}" "${killed}" 2 || fatal "the killed logger did not record 2 reports"
kill -KILL "${pid}"
wait "${pid}" 2>/dev/null
"${dump}" --log="${killed}" /aos >"${tmp}/killed.out" 2>"${tmp}/killed.dump.err" ||
  fail "aos_dump --log of the killed log exited $?: $(cat "${tmp}/killed.dump.err")"
(($(wc -l <"${tmp}/killed.out") >= 2)) || fail "killed log: $(cat "${tmp}/killed.out")"
grep -q '"name": "aos_logger"' "${tmp}/killed.out" || fail "killed log holds no aos_logger report"
grep -q "no Footer" "${tmp}/killed.dump.err" || fail "aos_dump did not say the log was unfinished: $(cat "${tmp}/killed.dump.err")"

# SIGTERM: the logger finishes the file (summary and all) and says so.
mkdir -p "${tmp}/dir"
"${logger}" --config="${config}" --shm_base="${base}" --log_dir="${tmp}/dir" \
  --compression=lz4 2>"${tmp}/term.err" &
pid=$!
kill_at_exit "${pid}"
wait_until compgen -G "${tmp}/dir/aos_log_*.mcap"
log_file="$(ls "${tmp}/dir"/aos_log_*.mcap 2>/dev/null)"
[[ "${log_file}" =~ /aos_log_[0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{2}-[0-9]{2}-[0-9]{2}\.mcap$ ]] ||
  fatal "--log_dir made '${log_file}'"
wait_for_reports "${dump}" "${log_file}" 1 || fatal "the logger did not record a report"
# Live, aos_dump -v shows a report's origin, its loop's "timing_reports"
# timer, by id only.
timeout 10 "${dump}" --config="${config}" --shm_base="${base}" -v --count=1 \
  /aos >"${tmp}/live" 2>"${tmp}/live.err" || fail "aos_dump -v live: $(cat "${tmp}/live.err")"
origin_head='^  origin (0x[0-9a-f]{8})'
origin_tail=': hops 1, time [0-9]+\.[0-9]{9}sec, age [0-9]+\.[0-9]{3} us ±0 us$'
live_origin="$(sed -n 2p "${tmp}/live")"
[[ "${live_origin}" =~ ${origin_head}${origin_tail} ]] ||
  fail "aos_dump -v live: no origin line: $(cat "${tmp}/live")"
live_id="${BASH_REMATCH[1]:-}"
kill -TERM "${pid}"
status=0
wait "${pid}" || status=$?
((status == 0)) || fail "SIGTERM: exit ${status}: $(cat "${tmp}/term.err")"
grep -q "aos_logger: recorded [0-9]* messages into ${log_file}" "${tmp}/term.err" ||
  fail "no summary line: $(cat "${tmp}/term.err")"
"${dump}" --log="${log_file}" /aos >/dev/null 2>"${tmp}/term.dump.err" ||
  fail "aos_dump --log of the finished log exited $?: $(cat "${tmp}/term.dump.err")"
[[ ! -s "${tmp}/term.dump.err" ]] || fail "a finished log has problems: $(cat "${tmp}/term.dump.err")"
# The log keeps every report's origin, which its reports name.
"${dump}" --log="${log_file}" --origins /aos >"${tmp}/origins" 2>&1 ||
  fail "aos_dump --origins --log: $(cat "${tmp}/origins")"
logged_origin="$(sed -n 2p "${tmp}/origins")"
name=' \(timer timing_reports of aos_logger\)'
[[ "${logged_origin}" =~ ${origin_head}${name}${origin_tail} ]] ||
  fail "aos_dump --origins --log: $(head -c 600 "${tmp}/origins")"
[[ "${BASH_REMATCH[1]:-}" == "${live_id}" ]] ||
  fail "the log's origin ${BASH_REMATCH[1]:-} is not the live one, ${live_id}"

# Bad paths and flags: one line naming them, exit 1.
expect_error() {
  local expected="$1"
  shift
  local status=0
  "${logger}" --config="${config}" --shm_base="${base}" "$@" >"${tmp}/out" 2>"${tmp}/err" || status=$?
  ((status == 1)) || fail "$* exited ${status}, not 1"
  (($(wc -l <"${tmp}/err") == 1)) || fail "$*: not one line: $(cat "${tmp}/err")"
  grep -qF -- "${expected}" "${tmp}/err" || fail "$*: '${expected}' not in: $(cat "${tmp}/err")"
}
expect_error "${tmp}/no/such/dir/x.mcap: cannot create the log file" \
  --log_file="${tmp}/no/such/dir/x.mcap"
expect_error "/dev/full: cannot write the log: No space left on device" \
  --log_file=/dev/full
expect_error "--channels=(: not a regular expression" \
  --log_file="${tmp}/x.mcap" '--channels=('
expect_error "nothing to log" --log_file="${tmp}/x.mcap" --channels=/nothing
expect_error "give exactly one of --log_file" 
expect_error "--compression=gzip" --log_file="${tmp}/x.mcap" --compression=gzip
# A flag's value of 100 KB is named elided, with its length (and refused
# before std::regex, whose recursive compiler it used to crash).
long="$(head -c 100000 /dev/zero | tr '\0' 'a')"
expect_error "(100001 bytes): longer than 1024 characters" \
  --log_file="${tmp}/x.mcap" "--channels=(${long}"
(($(wc -c <"${tmp}/err") < 1000)) || fail "a long --channels is echoed whole"
# Readers refuse chunks larger than aos_logger writes (docs/logging.md):
# --chunk_size stops at 64 MiB.
expect_error "--chunk_size=67108865: give 1024 to 67108864 bytes (readers refuse larger chunks)" \
  --log_file="${tmp}/x.mcap" --chunk_size=67108865
"${logger}" --help >"${tmp}/help" 2>&1
grep -q "docs/logging.md" "${tmp}/help" || fail "--help: $(cat "${tmp}/help")"
finish
