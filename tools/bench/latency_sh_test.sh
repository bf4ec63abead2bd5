#!/bin/bash
# tools/bench/latency.sh's own arguments: --help, --dry-run (what reaches
# latency_bench, and that it builds and measures under the build lock), and
# a clear refusal of anything else, before it installs or builds anything.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
script="${root}/tools/bench/latency.sh"

bash "${script}" --help >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "--help exited ${status}"
grep -q 'tools/bench/latency.sh \[--long\] \[--main_job_only | --scale_only | --no_scale\]' "${tmp}/out" ||
  fail "--help does not show the usage: $(cat "${tmp}/out")"
grep -q 'cyclictest' "${tmp}/out" || fail "--help does not say what it compares with"
for flag in --scale_timers= --scale_watchers= --scale_seconds= --scale_p99_pairs= --dry-run; do
  grep -q -- "${flag}" "${tmp}/out" || fail "--help does not mention ${flag}"
done

# dry_run ARGS...: latency.sh --dry-run ARGS into out/err; its status.
dry_run() {
  bash "${script}" --dry-run "$@" >"${tmp}/out" 2>"${tmp}/err"
}

dry_run
status=$?
[[ ${status} == 0 ]] || fail "--dry-run exited ${status}: $(cat "${tmp}/err")"
grep -q '^build:   flock -o /tmp/aos-bazel.lock ./tools/aos.sh bazel build -c opt .*//tools/bench:scale_app' "${tmp}/out" ||
  fail "--dry-run does not build under the build lock: $(cat "${tmp}/out")"
grep -q '^measure: flock -o /tmp/aos-bazel.lock bazel-bin/tools/bench/latency_bench --bin_dir=bazel-bin$' "${tmp}/out" ||
  fail "--dry-run does not measure under the build lock: $(cat "${tmp}/out")"

dry_run --scale_only --scale_timers=1,100 --scale_watchers=4 --scale_seconds=2 --scale_p99_pairs=0 --long
grep -q -- 'latency_bench --bin_dir=bazel-bin --scale_only --scale_timers=1,100 --scale_watchers=4 --scale_seconds=2 --scale_p99_pairs=0 --long_run$' "${tmp}/out" ||
  fail "the scale flags do not reach latency_bench: $(cat "${tmp}/out")"
dry_run --no_scale --json=x.json
grep -q -- 'latency_bench --bin_dir=bazel-bin --noscale --json=x.json$' "${tmp}/out" ||
  fail "--no_scale is not latency_bench's --noscale: $(cat "${tmp}/out")"
dry_run --main_job_only --priority=90 --interval_us=500 --plot=p.png
grep -q -- '--main_job_only --priority=90 --interval_us=500 --plot=p.png$' "${tmp}/out" ||
  fail "the other flags do not reach latency_bench: $(cat "${tmp}/out")"

dry_run --scale
grep -q -- 'latency_bench --bin_dir=bazel-bin --scale$' "${tmp}/out" ||
  fail "--scale does not reach latency_bench: $(cat "${tmp}/out")"

for bad in --lnog --scales --scale_only=true; do
  bash "${script}" "${bad}" --dry-run >"${tmp}/out" 2>"${tmp}/err"
  status=$?
  [[ ${status} == 2 ]] || fail "${bad}: an unknown argument exited ${status}, want 2"
  grep -q "unknown argument '${bad}'" "${tmp}/err" ||
    fail "${bad}: the message does not name the argument: $(cat "${tmp}/err")"
  [[ ! -s "${tmp}/out" ]] || fail "${bad}: an unknown argument printed to stdout"
done

finish
