#!/bin/bash
# Our MCAP logs, read by the MCAP project's own TypeScript reader
# (@mcap/core; check_mcap.js says what is checked), for every compression,
# and a two-node log with remote records; every message is also decoded as
# Foxglove does (foxglove_decode.js).
# The npm packages are installed by ./tools/aos.sh (install, test, run)
# next to mcap_check/package.json.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
writer="${root}/aos/events/logging/mcap_check_log_writer"
# node_modules sits next to package.json in the source tree: follow the
# runfiles link there.
npm_dir="$(dirname "$(readlink -f "${root}/aos/events/logging/mcap_check/package.json")")"
script="${npm_dir}/check_mcap.js"
dir="${tmp}/mcap_check"
mkdir -p "${dir}"

command -v node >/dev/null ||
  fatal "no node on PATH: run ./tools/aos.sh install (Debian's nodejs)"
for package in @mcap/core @mcap/support flatbuffers flatbuffers_reflection; do
  [[ -d "${npm_dir}/node_modules/${package}" ]] ||
    fatal "${npm_dir}/node_modules has no ${package}: run ./tools/aos.sh install"
done

"${writer}" --dir="${dir}" || fatal "mcap_check_log_writer exited $?"
# check_mcap.js prints what it found wrong.
NODE_PATH="${npm_dir}/node_modules" node "${script}" "${dir}/expected.json" \
  "${dir}/none.mcap" "${dir}/lz4.mcap" "${dir}/zstd.mcap" ||
  fail "the MCAP reader refused a single-node log (above)"
# pi2's log of a two-node run: forwarded channels and their remote records.
NODE_PATH="${npm_dir}/node_modules" node "${script}" \
  "${dir}/multinode_expected.json" "${dir}/multinode.mcap" ||
  fail "the MCAP reader refused the two-node log (above)"
finish
