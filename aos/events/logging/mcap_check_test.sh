#!/bin/bash
# Our MCAP logs, read by the MCAP project's own TypeScript reader
# (@mcap/core; check_mcap.js says what is checked), for every compression,
# and a two-node log with remote records; every message is also decoded as
# Foxglove does (foxglove_decode.js).
# The npm packages are installed by ./tools/aos.sh (install, test, run)
# next to mcap_check/package.json.
set -euo pipefail

runfiles="${TEST_SRCDIR:-$0.runfiles}/${TEST_WORKSPACE:-aos}"
writer="${runfiles}/aos/events/logging/mcap_check_log_writer"
# node_modules sits next to package.json in the source tree: follow the
# runfiles link there.
npm_dir="$(dirname "$(readlink -f "${runfiles}/aos/events/logging/mcap_check/package.json")")"
script="${npm_dir}/check_mcap.js"
dir="${TEST_TMPDIR:-$(mktemp -d)}/mcap_check"
mkdir -p "${dir}"

if ! command -v node >/dev/null; then
  echo "FAIL: no node on PATH: run ./tools/aos.sh install (Debian's nodejs)"
  exit 1
fi
for package in @mcap/core @mcap/support flatbuffers flatbuffers_reflection; do
  if [[ ! -d "${npm_dir}/node_modules/${package}" ]]; then
    echo "FAIL: ${npm_dir}/node_modules has no ${package}: run ./tools/aos.sh install"
    exit 1
  fi
done

"${writer}" --dir="${dir}"
NODE_PATH="${npm_dir}/node_modules" node "${script}" "${dir}/expected.json" \
  "${dir}/none.mcap" "${dir}/lz4.mcap" "${dir}/zstd.mcap"
# pi2's log of a two-node run: forwarded channels and their remote records.
NODE_PATH="${npm_dir}/node_modules" node "${script}" \
  "${dir}/multinode_expected.json" "${dir}/multinode.mcap"
