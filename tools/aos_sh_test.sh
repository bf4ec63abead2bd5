#!/bin/bash
# tools/aos.sh's own arguments: no argument prints the help, an unknown
# command is one line and exit 1, before anything is installed or built.
# Then run, build and test against fakes (below): run and build never call
# npm; run gives each program its own flags, names a program that refuses
# its arguments, refuses a --log it cannot write before building, fails
# when the logger fails or ping got no pong, prints the streamer's summary
# before ping's, and ends comparing ping's timer with cyclictest; test ends
# with tools/test_summary.py's line.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
script="${root}/tools/aos.sh"

bash "${script}" >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 0 ]] || fail "no argument exited ${status}"
grep -q 'tools/aos.sh run' "${tmp}/out" || fail "no argument did not print the help: $(cat "${tmp}/out")"

bash "${script}" frobnicate >"${tmp}/out" 2>"${tmp}/err"
status=$?
[[ ${status} == 1 ]] || fail "an unknown command exited ${status}, want 1"
[[ $(wc -l <"${tmp}/err") == 1 ]] || fail "more than one line: $(cat "${tmp}/err")"
grep -q "unknown command 'frobnicate'" "${tmp}/err" || fail "the command is not named: $(cat "${tmp}/err")"

# --- run, build and test, against a fake tree: aos.sh copied next to fake
# programs that record their arguments, and fakes of bazel, dpkg-query, npm
# and cyclictest first on PATH. No real build, no network.
tree="${tmp}/root"
calls="${tmp}/calls"
mkdir -p "${tree}/tools/dds_security" "${tree}/bazel-bin/examples" \
  "${tree}/bazel-bin/aos/tools" "${tree}/bazel-bin/aos/events/logging" \
  "${tree}/bazel-bin/aos/network" "${tree}/bazel-bin/aos/starter" \
  "${tree}/bazel-bin/aos/tracing" \
  "${tree}/aos/events/logging/mcap_check" "${tree}/aos/tracing/trace_check" \
  "${tmp}/bin" "${calls}" "${tmp}/run"
cp "${script}" "${tree}/tools/aos.sh"
cp "$(dirname "${script}")/test_summary.py" "${tree}/tools/test_summary.py"
echo '{}' >"${tree}/aos/events/logging/mcap_check/package-lock.json"
echo '{}' >"${tree}/aos/tracing/trace_check/package-lock.json"
touch "${tree}/bazel-bin/examples/pingpong_config.json" \
  "${tree}/bazel-bin/examples/multinode_pingpong_config.json"
fake() {
  printf '#!/bin/bash\necho "$*" >>"%s/%s"\n%s\n' "${calls}" "$(basename "$1")" "$2" >"$1"
  chmod +x "$1"
}
# A program of ours: --version checks flags (an unknown --bogus is refused
# as gflags does); otherwise it runs until SIGTERM.
readonly PROGRAM='for a; do [[ $a == --bogus ]] && { echo "ERROR: unknown command line flag '"'bogus'"'" >&2; exit 1; }; done
for a; do [[ $a == --version ]] && exit 0; done
trap "exit 0" TERM
while :; do sleep 0.05; done'
fake "${tmp}/bin/bazel" 'exit 0'
fake "${tmp}/bin/dpkg-query" 'echo "install ok installed"'
fake "${tmp}/bin/npm" 'echo "npm ERR! network request to https://registry.npmjs.org failed" >&2; exit 1'
fake "${tmp}/bin/cyclictest" 'for a; do [[ $a == --json=* ]] && echo "{\"thread\": {\"0\": {\"cycles\": 100, \"histogram\": {\"20\": 50, \"30\": 49, \"60\": 1}}}}" >"${a#--json=}"; done; exit 0'
fake "${tree}/bazel-bin/examples/pong" "${PROGRAM}"
fake "${tree}/bazel-bin/aos/network/message_bridge" "${PROGRAM}"
fake "${tree}/bazel-bin/aos/tracing/aos_trace" "${PROGRAM}"
fake "${tree}/bazel-bin/aos/tools/aos_dump" 'echo "\"CONNECTED\""'
fake "${tree}/tools/netns_pair.sh" 'exit 1'
# starterd as it behaves, for what run needs: runs --config's autostart
# applications in order, starts one when aos_starter asks, keeps each one's
# state where aos_starter reads it (--shm_base/fake_starter), and on SIGTERM
# stops them in reverse start order, writing --statuses.
cat >"${tree}/bazel-bin/aos/starter/starterd" <<PY
#!/usr/bin/env python3
import json, os, signal, subprocess, sys, time
with open("${calls}/starterd", "a") as calls:
    calls.write(" ".join(sys.argv[1:]) + "\\n")
if "--version" in sys.argv:
    sys.exit(0)
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
apps = json.load(open(flags["config"]))["applications"]
state = os.path.join(flags["shm_base"], "fake_starter")
os.makedirs(state, exist_ok=True)
procs, order, stopping = {}, [], []
signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
def start(app):
    procs[app["name"]] = subprocess.Popen([app["executable_name"]] + app["args"])
    order.append(app["name"])
for app in apps:
    if app.get("autostart", True):
        start(app)
while not stopping:
    for app in apps:
        request = os.path.join(state, "start_" + app["name"])
        if os.path.exists(request):
            os.remove(request)
            if app["name"] not in procs:
                start(app)
        process = procs.get(app["name"])
        code = None if process is None else process.poll()
        text = "STOPPED -" if process is None else (
            f"RUNNING {process.pid}" if code is None else f"STOPPED {code}")
        with open(os.path.join(state, app["name"]), "w") as file:
            file.write(text)
    time.sleep(0.05)
lines = []
for name in reversed(order):
    procs[name].terminate()
    lines.append(f"{name} {procs[name].wait()}\\n")
if "statuses" in flags:
    open(flags["statuses"], "w").write("".join(lines))
PY
# aos_starter as it behaves, against the fake starterd: status prints a
# row per application; start NAME asks for it and waits until it runs.
cat >"${tree}/bazel-bin/aos/starter/aos_starter" <<PY
#!/usr/bin/env python3
import os, sys, time
with open("${calls}/aos_starter", "a") as calls:
    calls.write(" ".join(sys.argv[1:]) + "\\n")
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
words = [a for a in sys.argv[1:] if not a.startswith("--")]
state = os.path.join(flags["shm_base"], "fake_starter")
def read(name):
    try:
        return open(os.path.join(state, name)).read().split()
    except OSError:
        return None
deadline = time.time() + 10
if words[0] == "status":
    while not os.path.isdir(state) and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    print("  NAME  STATE  PID")
    for name in sorted(os.listdir(state)):
        if not name.startswith("start_"):
            print("  " + name + "  " + " ".join(read(name)))
    sys.exit(0)
name = words[1]
os.makedirs(state, exist_ok=True)
open(os.path.join(state, "start_" + name), "w").close()
while time.time() < deadline:
    now = read(name)
    if now and now[0] == "RUNNING":
        print(f"{name}: RUNNING (pid {now[1]})")
        sys.exit(0)
    time.sleep(0.05)
print(f"aos_starter: {name}: {now}", file=sys.stderr)
sys.exit(1)
PY
chmod +x "${tree}/bazel-bin/aos/starter/starterd" "${tree}/bazel-bin/aos/starter/aos_starter"
fake "${tree}/tools/dds_security/make_test_ca.sh" 'mkdir -p "$1"'
# ping prints its summary when stopped: after the streamer's, if run orders
# them; PONGS=0 makes it a ping nobody answered.
fake "${tree}/bazel-bin/examples/ping" 'for a; do [[ $a == --version ]] && exit 0; done
for a; do [[ $a == --summary_json=* ]] && summary="${a#*=}"; done
finish() {
  echo "ping: 10 pings, 0 not sent, ${PONGS:-10} pongs"
  echo "{\"pongs\": ${PONGS:-10}, \"timer_wakeup_us\": {\"p50\": 30.5, \"p99\": 80.25}}" >"${summary}"
  exit 0
}
trap finish TERM
while :; do sleep 0.05; done'
fake "${tree}/bazel-bin/aos/tools/aos_timing_report_streamer" "${PROGRAM%%trap*}"'
sleep 0.3
echo "Summary: every report of each application added up"'
# The logger fails at once as it does for a path it cannot write.
fake "${tree}/bazel-bin/aos/events/logging/aos_logger" 'for a; do [[ $a == --log_file=* ]] && file="${a#*=}"; done
if [[ -n "${LOGGER_FAILS:-}" ]]; then echo "aos_logger: ${file}: cannot open" >&2; exit 1; fi
touch "${file}"
trap "exit 0" TERM
while :; do sleep 0.05; done'

aos() {
  rm -f "${calls}"/*
  PATH="${tmp}/bin:${PATH}" bash "${tree}/tools/aos.sh" "$@" >"${tmp}/run/all" 2>&1
}
called() { cat "${calls}/$1" 2>/dev/null; }

aos build
status=$?
[[ ${status} == 0 ]] || fail "build exited ${status}: $(cat "${tmp}/run/all")"
[[ -z "$(called npm)" ]] || fail "build called npm: $(called npm)"
grep -q '^build .*//\.\.\.' "${calls}/bazel" || fail "build did not build //...: $(called bazel)"

aos run --sleep_us=1000 --priority=7 --format=aos
status=$?
[[ ${status} == 0 ]] || fail "run exited ${status}: $(cat "${tmp}/run/all")"
[[ -z "$(called npm)" ]] || fail "run called npm: $(called npm)"
grep -v -- '--version' "${calls}/ping" | grep -q -- '--sleep_us=1000.*--priority=7\|--priority=7.*--sleep_us=1000' ||
  fail "ping did not get --sleep_us and --priority: $(called ping)"
grep -q -- '--minloglevel=1' "${calls}/ping" || fail "ping is not quiet: $(called ping)"
grep -q -- '--priority=7' "${calls}/pong" || fail "pong did not get --priority: $(called pong)"
grep -q -- '--sleep_us' "${calls}/pong" && fail "pong got --sleep_us: $(called pong)"
grep -q -- '--sleep_us\|--priority' "${calls}/aos_timing_report_streamer" &&
  fail "the streamer got ping's flags: $(called aos_timing_report_streamer)"
grep -q -- '--format=aos' "${calls}/aos_timing_report_streamer" ||
  fail "the streamer did not get --format=aos: $(called aos_timing_report_streamer)"
# The streamer's summary, then ping's, then the machine.
order="$(grep -n -e '^Summary: every report' -e '^ping: 10 pings' -e '^aos: this machine' "${tmp}/run/all" | cut -d: -f2- | cut -c1-12 | tr '\n' '|')"
[[ "${order}" == "Summary: eve|ping: 10 pin|aos: this ma|" ]] ||
  fail "summaries out of order (${order}): $(cat "${tmp}/run/all")"
grep -q -- '-i 1000' "${calls}/cyclictest" && grep -q -- '-p 7' "${calls}/cyclictest" ||
  fail "cyclictest not at ping's rate and priority: $(called cyclictest)"
tail -n 1 "${tmp}/run/all" | grep -q '^aos: this machine at 1000 Hz, SCHED_FIFO 7: cyclictest (5 s) wakes p50 20.5 us, p99 30.5 us; ping.s timer p50 30.5 us (1.49x), p99 80.2 us (2.63x) of that$' ||
  fail "no comparison with cyclictest last: $(tail -n 3 "${tmp}/run/all")"
grep -q '^aos: idle .*; waking one costs about 20 us here (cyclictest.s p50)' "${tmp}/run/all" ||
  fail "no idle regime: $(cat "${tmp}/run/all")"

# Ctrl-C while run still builds: one line, exit 0, nothing started.
fake "${tmp}/bin/bazel" 'sleep 10'
rm -f "${calls}"/*
PATH="${tmp}/bin:${PATH}" timeout --preserve-status -s INT 2 \
  bash "${tree}/tools/aos.sh" run >"${tmp}/run/all" 2>&1
status=$?
[[ ${status} == 0 ]] || fail "run interrupted while building exited ${status}: $(cat "${tmp}/run/all")"
grep -q '^aos: stopped before anything ran, as asked; nothing was measured$' "${tmp}/run/all" ||
  fail "run interrupted while building did not say so: $(cat "${tmp}/run/all")"
[[ -z "$(called pong)$(called ping)" ]] || fail "run interrupted while building started ping or pong: $(called pong) $(called ping)"
fake "${tmp}/bin/bazel" 'exit 0'

# A trigger threshold goes to ping and pong, and the node's flight recorder
# runs beside them, writing where --trace_dir says.
aos run --trace_wakeup_threshold_us=500 --trace_dir="${tmp}/run/traces"
status=$?
[[ ${status} == 0 ]] || fail "run --trace_* exited ${status}: $(cat "${tmp}/run/all")"
grep -q -- '--trace_wakeup_threshold_us=500' "${calls}/ping" ||
  fail "ping did not get the threshold: $(called ping)"
grep -q -- '--trace_wakeup_threshold_us=500' "${calls}/pong" ||
  fail "pong did not get the threshold: $(called pong)"
grep -q -- "record --out=${tmp}/run/traces" "${calls}/aos_trace" ||
  fail "aos_trace did not record: $(called aos_trace)"
grep -q -- '--trace' "${calls}/aos_timing_report_streamer" &&
  fail "the streamer got the recorder's flags: $(called aos_timing_report_streamer)"
grep -q "^aos: flight recorder: 0 snapshot(s) of this run in ${tmp}/run/traces" "${tmp}/run/all" ||
  fail "the snapshots are not counted: $(cat "${tmp}/run/all")"

# The kernel's switches go to the recorder (as root; otherwise refused).
aos run --trace_wakeup_threshold_us=500 --trace_sched_switch --trace_dir="${tmp}/run/traces"
status=$?
if [[ "$(id -u)" == 0 ]]; then
  [[ ${status} == 0 ]] || fail "run --trace_sched_switch exited ${status}: $(cat "${tmp}/run/all")"
  grep -q -- "--sched_switch record --out=${tmp}/run/traces" "${calls}/aos_trace" ||
    fail "aos_trace did not get --sched_switch: $(called aos_trace)"
  grep -q -- 'sched' "${calls}/ping" && fail "ping got --trace_sched_switch: $(called ping)"
else
  [[ ${status} == 1 ]] || fail "run --trace_sched_switch as $(id -un) exited ${status}, want 1"
  grep -q -- '--trace_sched_switch needs root' "${tmp}/run/all" ||
    fail "not root is not said: $(cat "${tmp}/run/all")"
fi
aos run --trace_sched_switch
status=$?
[[ ${status} == 1 ]] || fail "run --trace_sched_switch with no trigger exited ${status}, want 1"
grep -q -- '--trace_sched_switch adds the kernel.s switches to snapshots: give a trigger too' "${tmp}/run/all" ||
  fail "a sched trace with no trigger is not refused: $(cat "${tmp}/run/all")"
[[ -z "$(called bazel)" ]] || fail "built before refusing --trace_sched_switch: $(called bazel)"

aos run --trace_dir=/proc/no_such_dir
status=$?
[[ ${status} == 1 ]] || fail "run --trace_dir=/proc/no_such_dir exited ${status}, want 1"
grep -q -- '--trace_dir=/proc/no_such_dir: cannot write there; nothing was run' "${tmp}/run/all" ||
  fail "the bad --trace_dir is not named: $(cat "${tmp}/run/all")"
[[ -z "$(called bazel)" ]] || fail "built before refusing --trace_dir: $(called bazel)"

aos run --bogus
status=$?
[[ ${status} == 1 ]] || fail "run --bogus exited ${status}, want 1"
grep -q "aos_timing_report_streamer refused its arguments: ERROR: unknown command line flag 'bogus'" "${tmp}/run/all" ||
  fail "the refusing program is not named: $(cat "${tmp}/run/all")"
grep -q -v -- '--version' "${calls}/ping" 2>/dev/null && fail "ping ran anyway: $(called ping)"

aos run --log=/nonexistent/x.mcap
status=$?
[[ ${status} == 1 ]] || fail "run --log=/nonexistent/x.mcap exited ${status}, want 1"
grep -q -- '--log=/nonexistent/x.mcap: there is no directory /nonexistent; nothing was run' "${tmp}/run/all" ||
  fail "the bad --log path is not named: $(cat "${tmp}/run/all")"
[[ -z "$(called bazel)" ]] || fail "built before refusing --log: $(called bazel)"

LOGGER_FAILS=1 aos run --log="${tmp}/run/run.mcap"
status=$?
[[ ${status} == 1 ]] || fail "run with a failing logger exited ${status}, want 1"
grep -q "aos_logger is not running: aos_logger STOPPED 1" "${tmp}/run/all" ||
  fail "the logger's failure is not said: $(cat "${tmp}/run/all")"
[[ -z "$(called aos_timing_report_streamer | grep -v -- --version)" ]] ||
  fail "streamed anyway: $(called aos_timing_report_streamer)"

PONGS=0 aos run
status=$?
[[ ${status} == 1 ]] || fail "run without pongs exited ${status}, want 1"
grep -q 'ping got no pong' "${tmp}/run/all" || fail "no pong is not said: $(cat "${tmp}/run/all")"

aos run --multinode --log="${tmp}/run/pi1.mcap"
status=$?
[[ ${status} == 0 ]] || fail "run --multinode --log exited ${status}: $(cat "${tmp}/run/all")"
grep -q -- "--node=pi1 .*--log_file=${tmp}/run/pi1.mcap" "${calls}/aos_logger" ||
  fail "pi1 was not recorded: $(called aos_logger)"
grep -q -- '--log' "${calls}/aos_timing_report_streamer" &&
  fail "the streamer got --log: $(called aos_timing_report_streamer)"

# A trigger across two nodes: each node's recorder runs, with its node.
aos run --multinode --trace_wakeup_threshold_us=500 --trace_dir="${tmp}/run/traces"
status=$?
[[ ${status} == 0 ]] || fail "run --multinode --trace_* exited ${status}: $(cat "${tmp}/run/all")"
for node in pi1 pi2; do
  grep -q -- "--node=${node} .*record --out=${tmp}/run/traces" "${calls}/aos_trace" ||
    fail "no recorder on ${node}: $(called aos_trace)"
done
grep -q "^aos: flight recorder: 0 snapshot(s) of this run in ${tmp}/run/traces" "${tmp}/run/all" ||
  fail "the multinode snapshots are not counted: $(cat "${tmp}/run/all")"

aos test
grep -q '^ci ' "${calls}/npm" || fail "test did not run npm ci: $(called npm)"
grep -q 'npm ci failed (no npm registry?)' "${tmp}/run/all" ||
  fail "npm's failure is not one line: $(cat "${tmp}/run/all")"

# A bazel that ran one target of two test cases, one skipped.
fake "${tmp}/bin/bazel" 'echo "//aos:x_test      PASSED in 0.1s"
mkdir -p bazel-testlogs/aos/x_test
echo "<testsuite name=\"T\" tests=\"2\" failures=\"0\" skipped=\"1\" errors=\"0\">" >bazel-testlogs/aos/x_test/test.xml'
aos test
status=$?
[[ ${status} == 0 ]] || fail "test of passing targets exited ${status}: $(cat "${tmp}/run/all")"
[[ "$(tail -n 1 "${tmp}/run/all")" == "1 passed, 0 failed, 1 skipped" ]] ||
  fail "test did not end with the summary: $(cat "${tmp}/run/all")"

finish
