#!/bin/bash
# A snapshot of a simulated ping/pong, read by TracerBench's Chrome trace
# event model from npm (trace_check/check_trace.js says what is checked),
# with the handler runs counted against the timing reports of the window.
# The npm packages are installed by ./tools/aos.sh (install, test) next to
# trace_check/package.json.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
writer="${root}/aos/tracing/trace_check_writer"
npm_dir="$(dirname "$(readlink -f "${root}/aos/tracing/trace_check/package.json")")"
dir="${tmp}/trace_check"
mkdir -p "${dir}"

command -v node >/dev/null ||
  fatal "no node on PATH: run ./tools/aos.sh install (Debian's nodejs)"
[[ -d "${npm_dir}/node_modules/@tracerbench/trace-model" ]] ||
  fatal "${npm_dir}/node_modules has no @tracerbench/trace-model: run ./tools/aos.sh install"

"${writer}" --dir="${dir}" || fatal "trace_check_writer exited $?"
NODE_PATH="${npm_dir}/node_modules" node "${npm_dir}/check_trace.js" \
  "${dir}/expected.json" "${dir}/snapshot.json" ||
  fail "the trace event model refused the snapshot (above)"
finish
