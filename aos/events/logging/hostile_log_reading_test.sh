#!/bin/bash
# aos_dump --log and aos_timing_report_streamer --log on logs a hostile
# writer could hand them (docs/logging.md, "Damaged and hostile logs"): a
# FIFO is refused at once; the decompression bomb of issue 21 (3 copies of a
# zstd chunk of 1 GiB of zeros) is refused chunk by chunk, under a 1.5 GB
# address-space limit that reading it whole would break, and everything else
# in the log is still printed; chunks past --log_memory_mb are refused;
# strings from the log reach stderr escaped and bounded.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"

writer="${root}/aos/events/logging/hostile_log_writer"
dump="${root}/aos/tools/aos_dump"
streamer="${root}/aos/tools/aos_timing_report_streamer"

"${writer}" --dir="${tmp}" || fatal "hostile_log_writer failed"
ping=(/test aos.examples.Ping)

# Runs "$@" with at most 1.5 GB of address space, output in ${tmp}/out and
# ${tmp}/err; returns its exit status.
limited() {
  (
    ulimit -v 1500000
    "$@"
  ) >"${tmp}/out" 2>"${tmp}/err"
}

# A FIFO nobody writes: one line naming it, exit 1, at once (60 s: a tool
# that waits on it would wait forever).
fifo="${tmp}/log.fifo"
mkfifo "${fifo}"
for tool in dump streamer; do
  program="${!tool}"
  name="$(basename "${program}")"
  args=()
  [[ "${tool}" == dump ]] && args=("${ping[@]}")
  timeout 60 "${program}" --log="${fifo}" "${args[@]}" >"${tmp}/out" 2>"${tmp}/err"
  status=$?
  [[ ${status} == 1 ]] || fail "${name} --log=FIFO exited ${status} (124: it hung), want 1"
  [[ "$(cat "${tmp}/err")" == "${name}: --log: ${fifo}: not a regular file (an MCAP log is one)" ]] ||
    fail "${name} --log=FIFO said: $(head -c 500 "${tmp}/err")"
done

# The bomb: every message of the clean log, and one line per refused copy
# naming the file, its offset and sizes.
"${dump}" --log="${tmp}/clean.mcap" "${ping[@]}" >"${tmp}/clean_dump.out" 2>/dev/null ||
  fail "aos_dump of the clean log failed"
"${streamer}" --log="${tmp}/clean.mcap" >"${tmp}/clean_streamer.out" 2>/dev/null ||
  fail "the streamer on the clean log failed"
(($(wc -l <"${tmp}/clean_dump.out") > 250)) || fail "the clean log has few pings"
refusal="${tmp}/bomb.mcap: the chunk at byte [0-9]+ \(messages from [0-9]+ to [0-9]+ ns\) claims 1073741824 bytes uncompressed from [0-9]+ compressed, more than the [0-9]+ bytes a chunk may hold here \(the largest chunk aos_logger writes for this log's channels: 67108864 bytes less one, plus their largest record\); refused; its messages are lost"
for tool in dump streamer; do
  program="${!tool}"
  name="$(basename "${program}")"
  args=()
  [[ "${tool}" == dump ]] && args=("${ping[@]}")
  limited "${program}" --log="${tmp}/bomb.mcap" "${args[@]}"
  status=$?
  [[ ${status} == 0 ]] || fail "${name} on the bomb exited ${status}: $(head -c 500 "${tmp}/err")"
  cmp -s "${tmp}/out" "${tmp}/clean_${tool}.out" ||
    fail "${name} on the bomb printed other than on the clean log: $(diff "${tmp}/out" "${tmp}/clean_${tool}.out" | head -5)"
  count="$(grep -cE "^${name}: ${refusal}\$" "${tmp}/err")"
  [[ "${count}" == 3 ]] || fail "${name} on the bomb: ${count} refusals, want 3: $(head -c 1000 "${tmp}/err")"
done

# Chunks overlapping in time past --log_memory_mb=50: two of the four are
# open together (20 MiB each), the others are refused naming the flag; the
# clean log's messages are all printed, with the pings of the two kept.
limited "${dump}" --log="${tmp}/overlap.mcap" --log_memory_mb=50 "${ping[@]}"
status=$?
[[ ${status} == 0 ]] || fail "aos_dump on overlap.mcap exited ${status}: $(head -c 500 "${tmp}/err")"
count="$(grep -c "over the memory budget of 52428800 bytes for open chunks (--log_memory_mb=50); refused; its messages are lost" "${tmp}/err")"
[[ "${count}" == 2 ]] || fail "overlap.mcap: ${count} budget refusals, want 2: $(head -c 1000 "${tmp}/err")"
[[ -z "$(comm -23 <(sort "${tmp}/clean_dump.out") <(sort "${tmp}/out"))" ]] ||
  fail "overlap.mcap: messages of the clean log are missing"
[[ $(($(wc -l <"${tmp}/out") - $(wc -l <"${tmp}/clean_dump.out"))) == 4 ]] ||
  fail "overlap.mcap: want the 4 pings of the two chunks kept"

# Strings from the log: no NUL, escape or other control byte on stderr, and
# no line of megabytes.
for tool in dump streamer; do
  program="${!tool}"
  args=()
  [[ "${tool}" == dump ]] && args=("${ping[@]}")
  limited "${program}" --log="${tmp}/strings.mcap" "${args[@]}"
  status=$?
  [[ ${status} == 0 ]] || fail "$(basename "${program}") on strings.mcap exited ${status}"
  LC_ALL=C grep -q '[^[:print:]]' "${tmp}/err" &&
    fail "$(basename "${program}") printed control bytes: $(od -c "${tmp}/err" | head -5)"
  longest="$(awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "${tmp}/err")"
  ((longest < 2000)) || fail "$(basename "${program}"): a stderr line of ${longest} bytes"
  grep -q 'unknown compression "zst\\x00d\\x1b\[2J' "${tmp}/err" ||
    fail "the compression name is not shown escaped: $(head -c 1000 "${tmp}/err")"
done

# A bad --log_memory_mb: one line naming it, exit 1.
"${dump}" --log="${tmp}/clean.mcap" --log_memory_mb=0 "${ping[@]}" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "--log_memory_mb=0 exited ${status}, want 1"
[[ "$(cat "${tmp}/err")" == "aos_dump: --log: --log_memory_mb=0: give 1 to 1048576 (MiB)" ]] ||
  fail "--log_memory_mb=0 said: $(cat "${tmp}/err")"

finish "all hostile log reading checks passed"
