#!/bin/bash
# Every tool's --help opens with its usage and its own flags; the flags it
# shares with other aos programs (--config, --node, --shm_base) follow, and
# the event loop's (--timing_reports, --die_on_malloc, ...), which seldom
# matter to a tool, come last under a heading of their own.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"

# The line number of the first line matching `pattern` in $1, or 100000.
line_of() {
  local number
  number="$(grep -n -m 1 -E -- "$2" "$1" | cut -d: -f1)"
  echo "${number:-100000}"
}

for tool in aos_dump aos_send aos_channels aos_timing_report_streamer aos_config_check; do
  "${root}/aos/tools/${tool}" --help >"${tmp}/help" 2>&1
  status=$?
  [[ ${status} == 0 ]] || fail "${tool} --help exited ${status}"
  grep -q "^Usage: ${tool}" "${tmp}/help" || fail "${tool}: no usage first: $(head -3 "${tmp}/help")"
  own="$(line_of "${tmp}/help" "^Flags of ${tool}:$")"
  ((own < 100000)) || fail "${tool}: no 'Flags of ${tool}:' section: $(cat "${tmp}/help")"
  # Its own section comes before every other flag.
  first_flag="$(line_of "${tmp}/help" '^  --')"
  ((own < first_flag)) || fail "${tool}: a flag before its own section: $(sed -n "${first_flag}p" "${tmp}/help")"
  config="$(line_of "${tmp}/help" '^  --config ')"
  ((own < config && config < 100000)) || fail "${tool}: --config missing or before its own flags"
  grep -q 'see its --help' "${tmp}/help" && fail "${tool}: --config's help sends the reader to --help"
  grep -q -- '--alsologtostderr' "${tmp}/help" && fail "${tool}: glog's flags in --help"
  event_loop="$(line_of "${tmp}/help" '^Event loop flags')"
  if [[ "${tool}" == aos_config_check ]]; then
    ((event_loop == 100000)) || fail "aos_config_check runs no loop but lists its flags"
    continue
  fi
  # The loop's flags last; --shm_base, which every reader needs, before them.
  for flag in timing_report_ms timing_reports die_on_malloc permissions cpu_dma_latency_us; do
    at="$(line_of "${tmp}/help" "^  --${flag} ")"
    ((event_loop < at && at < 100000)) || fail "${tool}: --${flag} not under 'Event loop flags'"
  done
  shm_base="$(line_of "${tmp}/help" '^  --shm_base ')"
  ((shm_base < event_loop)) || fail "${tool}: --shm_base among the event loop's flags"
done

finish
