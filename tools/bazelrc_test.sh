#!/bin/bash
# .bazelrc: every command must accept the options it gives that command.
# A `common` line applies to every command, `bazel version`, `shutdown` and
# `help` included, and those reject build and loading options
# (`--noshow_loading_progress` made `./tools/aos.sh bazel shutdown` fail):
# such options go on the commands that take them (`build`, which test, run,
# info, clean, cquery and aquery inherit; `query`; `fetch`; `sync`).
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
rc="${root}/.bazelrc"
[[ -f "${rc}" ]] || fatal "no .bazelrc at ${rc}"
# Options every Bazel 4 command takes (client and UI options); empty until
# one is needed.
readonly every_command_takes='^$'
while read -r number option; do
  if ! grep -qE -- "${every_command_takes}" <<<"${option%%=*}"; then
    fail ".bazelrc:${number}: 'common ${option}': not every command" \
      "takes it (bazel version and shutdown reject it); give it to build" \
      "(and query, fetch, sync) instead"
  fi
done < <(awk '$1 == "common" { for (i = 2; i <= NF; ++i) print NR, $i }' "${rc}")
# The option stays on the commands that print loading progress.
for command in build query fetch sync; do
  grep -qE "^${command} .*--noshow_loading_progress" "${rc}" ||
    fail "${command} lost --noshow_loading_progress"
done
finish
