# Sourced by shell tests that record with aos_logger: waits for timing
# reports to reach the log, instead of sleeping and hoping they did.
#
#   source "${runfiles}/aos/testing/wait_for_reports.sh"
#   wait_for_reports "${dump}" "${log}" 2 || exit 1       # any two reports
#   wait_for_reports "${dump}" "${log}" 1 pong || exit 1  # one of pong's
#
# wait_for_reports DUMP LOG COUNT [APPLICATION]: waits, at most 60 s, until
# aos_dump (the binary DUMP) --log=LOG finds at least COUNT timing reports on
# /aos, only APPLICATION's if it is given. LOG is read while it is written,
# so the logger should flush often (aos_logger --flush_period_ms). Returns 0
# then; otherwise says on stderr what it did not find and returns 1.
wait_for_reports() {
  local dump="$1" log="$2" count="$3" application="${4:-}"
  # aos_dump prints a report's fields in schema order, its name first.
  local pattern=' /aos aos\.timing\.Report: {'
  [[ -n "${application}" ]] && pattern+=" \"name\": \"${application}\","
  local i found
  for ((i = 0; i < 600; ++i)); do
    if [[ -f "${log}" ]]; then
      found="$("${dump}" --log="${log}" /aos 2>/dev/null | grep -c -- "${pattern}")" ||
        true
      ((found >= count)) && return 0
    fi
    sleep 0.1
  done
  echo "wait_for_reports: no ${count} ${application:-timing} report(s) in ${log} after 60 s" >&2
  return 1
}
