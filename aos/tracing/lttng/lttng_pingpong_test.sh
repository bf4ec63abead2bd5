#!/bin/bash
# ping and pong under a real LTTng session: a session daemon of the test's
# own (its LTTNG_HOME in a temp dir, so never the system's), a session
# enabling aos:*, ping --count=100 and pong with libaos_lttng_tp.so
# preloaded, then babeltrace2 reads the trace. It checks that the register
# events name ping's timer and pong's Ping watcher, that their
# callback_start/callback_end come in pairs, that each timer call has its
# timer_wakeup, and that every Ping pong received is one ping sent (same
# queue index and sent time); then that lost_messages_sim's fetcher, which
# falls behind, has one aos:messages_lost with the count it counted. First,
# without lttng, it checks that ping and pong do not link liblttng-ust.
# Where lttng, its session daemon or babeltrace2 cannot run it says why and
# skips the rest (passes).
#
# As root it runs everything as `nobody`: a root session daemon would live
# in /var/run/lttng, the system's, whatever LTTNG_HOME says.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"

# Linking the framework must not bring liblttng-ust (its listener threads)
# into a program: only the preloaded provider does. Checked before anything
# that may skip.
for program in ping pong; do
  needed="$(readelf -d "${root}/examples/${program}")" || fatal "readelf -d ${program} failed"
  grep -q 'liblttng-ust\.so' <<<"${needed}" &&
    fail "${program} links liblttng-ust itself; only libaos_lttng_tp.so may"
done
grep -q 'liblttng-ust\.so' <<<"$(readelf -d "${root}/aos/tracing/lttng/libaos_lttng_tp.so")" ||
  fail "libaos_lttng_tp.so does not link liblttng-ust"

skip() {
  echo "SKIPPED: $*"
  finish
}
for tool in lttng lttng-sessiond; do
  command -v "${tool}" >/dev/null ||
    skip "no ${tool} (Debian package lttng-tools)"
done
command -v babeltrace2 >/dev/null || skip "no babeltrace2 (Debian package babeltrace2)"
command -v python3 >/dev/null || skip "no python3"

# Everything the traced side touches, readable by the user it runs as.
work="$(mktemp -d /tmp/aos_lttng_XXXXXX)"
shm="$(mktemp -d /dev/shm/aos_lttng_XXXXXX)"
as=()
if [[ "$(id -u)" == 0 ]]; then
  command -v setpriv >/dev/null || skip "root without setpriv (util-linux) to run the session daemon as nobody"
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
home="${work}/home"
mkdir -p "${work}/bin" "${home}" "${work}/trace"
cp "${root}/examples/ping" "${root}/examples/pong" \
  "${root}/examples/pingpong_config.json" \
  "${root}/aos/tracing/lttng/libaos_lttng_tp.so" \
  "${root}/aos/tracing/lttng/lost_messages_sim" "${work}/bin/"
chmod -R a+rX "${work}"
if ((${#as[@]} > 0)); then
  chown -R nobody:nogroup "${home}" "${work}/trace" "${shm}"
  chmod 755 "${work}"
fi
run() { "${as[@]}" env LTTNG_HOME="${home}" HOME="${home}" "$@"; }
# lttng-ust's wait files (for the system's session daemon and the traced
# user's): each removed after if this test made it.
made_wait_shm=()
for file in /dev/shm/lttng-ust-wait-8 "/dev/shm/lttng-ust-wait-8-$(run id -u)"; do
  [[ -e "${file}" ]] || made_wait_shm+=("${file}")
done

pong_pid=""
cleanup() {
  [[ -n "${pong_pid}" ]] && kill -TERM "${pong_pid}" 2>/dev/null
  wait 2>/dev/null
  run lttng destroy --all >/dev/null 2>&1
  local pid
  pid="$(cat "${home}/.lttng/lttng-sessiond.pid" 2>/dev/null)"
  if [[ -n "${pid}" ]]; then
    kill -TERM "${pid}" 2>/dev/null
    for _ in $(seq 50); do kill -0 "${pid}" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "${work}" "${shm}"
  rm -f "${made_wait_shm[@]}"
}
at_exit cleanup

run lttng-sessiond --daemonize --no-kernel >"${tmp}/sessiond.out" 2>&1 ||
  skip "lttng-sessiond could not start: $(tail -1 "${tmp}/sessiond.out")"
run lttng create aos_pingpong --output="${work}/trace/aos_pingpong" >"${tmp}/create.out" 2>&1 ||
  skip "lttng create failed (no session daemon here?): $(tail -1 "${tmp}/create.out")"
# Room for every event (lost_messages_sim makes some 30000 at once): a
# discarded one would fail a check below.
run lttng enable-channel --userspace --subbuf-size=4M --num-subbuf=4 aos >/dev/null ||
  fatal "lttng enable-channel failed"
run lttng enable-event --userspace --channel=aos 'aos:*' >/dev/null ||
  fatal "lttng enable-event aos:* failed"
run lttng add-context --userspace --channel=aos --type=vpid --type=procname >/dev/null ||
  fatal "lttng add-context failed"
run lttng start >/dev/null || fatal "lttng start failed"

preload="${work}/bin/libaos_lttng_tp.so"
config="${work}/bin/pingpong_config.json"
run LD_PRELOAD="${preload}" "${work}/bin/pong" --config="${config}" \
  --shm_base="${shm}" --priority=0 >"${tmp}/pong.out" 2>&1 &
pong_pid=$!
# ping's --count ends it once its last Ping is answered (a second later
# if an answer never comes, say the first before pong watched).
run LD_PRELOAD="${preload}" "${work}/bin/ping" --config="${config}" \
  --shm_base="${shm}" --priority=0 --count=100 >"${tmp}/ping.out" 2>&1 ||
  fail "ping exited $?: $(tail -3 "${tmp}/ping.out")"
kill -TERM "${pong_pid}"
wait "${pong_pid}"
pong_pid=""
# Simulated loops whose fetcher falls behind: aos:messages_lost.
run LD_PRELOAD="${preload}" "${work}/bin/lost_messages_sim" --config="${config}" \
  >"${tmp}/lost.out" 2>&1 || fail "lost_messages_sim exited $?: $(tail -3 "${tmp}/lost.out")"
lost="$(sed -n 's/^lost \([0-9]*\)$/\1/p' "${tmp}/lost.out")"
[[ -n "${lost}" && "${lost}" -gt 0 ]] || fail "lost_messages_sim lost no messages: $(cat "${tmp}/lost.out")"
run lttng stop >/dev/null || fail "lttng stop failed"
run lttng destroy aos_pingpong >/dev/null || fail "lttng destroy failed"

babeltrace2 "${work}/trace" >"${tmp}/events" 2>"${tmp}/babeltrace.err" ||
  fatal "babeltrace2 could not read the trace: $(tail -3 "${tmp}/babeltrace.err")"
# babeltrace2 warns of discarded events (on stderr, or as a line of its own).
discarded="$(grep -hi 'discarded' "${tmp}/babeltrace.err" "${tmp}/events" | head -1)"
[[ -z "${discarded}" ]] || fail "the trace lost events: ${discarded}"

python3 - "${tmp}/events" "${lost:-0}" <<'PY' || fail "the trace is not what ping and pong did (above)"
import re, sys
from collections import defaultdict

# babeltrace2's text: [time] (+delta) host provider:event: { cpu_id = N },
# { vpid = N, procname = "x" }, { field = value, ... }
line_re = re.compile(r'\] \(\+[^)]*\) \S+ (aos:\w+): (.*)$')
field_re = re.compile(r'(\w+) = ("(?:[^"\\]|\\.)*"|[^,}]+)')
events = []
for line in open(sys.argv[1]):
    m = line_re.search(line)
    if not m:
        continue
    fields = {}
    for key, value in field_re.findall(m.group(2)):
        value = value.strip()
        fields[key] = value[1:-1] if value.startswith('"') else value
    events.append((m.group(1), fields))

problems = []
def check(ok, what):
    if not ok:
        problems.append(what)

names = {}  # (vpid, id) -> (kind, name, application)
for kind, f in events:
    if kind == 'aos:callback_register':
        names[(f['vpid'], f['callback'])] = (f['kind'], f['name'], f['application'])
def find(kind, name, application):
    return [key for key, value in names.items() if value == (kind, name, application)]

timer = find('timer', 'ping', 'ping')
watcher = find('watcher', '/test aos.examples.Ping', 'pong')
ping_sender = find('sender', '/test aos.examples.Ping', 'ping')
lost_fetcher = find('fetcher', '/test aos.examples.Ping', 'lost_fetcher')
check(len(timer) == 1, 'one aos:callback_register for ping\'s timer "ping", got %d' % len(timer))
check(len(watcher) == 1, 'one aos:callback_register for pong\'s /test aos.examples.Ping watcher, got %d' % len(watcher))
check(len(ping_sender) == 1, 'one aos:callback_register for ping\'s /test aos.examples.Ping sender, got %d' % len(ping_sender))
check(len(lost_fetcher) == 1, 'one aos:callback_register for lost_fetcher\'s fetcher, got %d' % len(lost_fetcher))
if problems:
    print('\n'.join(problems)); print('registered:', sorted(names.values())); sys.exit(1)
timer, watcher, ping_sender, lost_fetcher = timer[0], watcher[0], ping_sender[0], lost_fetcher[0]

# Starts and ends alternate per callback, and the timer's wakeups match.
open_calls = {}
pairs = defaultdict(int)
wakeups = defaultdict(int)
sent = {}  # queue_index -> sent_time
received = []
lost = []
for kind, f in events:
    key = (f.get('vpid'), f.get('callback'))
    if kind == 'aos:callback_start':
        check(key not in open_calls, 'callback_start twice without an end: %s' % (key,))
        open_calls[key] = True
    elif kind == 'aos:callback_end':
        check(key in open_calls, 'callback_end without a start: %s' % (key,))
        open_calls.pop(key, None)
        pairs[key] += 1
    elif kind == 'aos:timer_wakeup':
        wakeups[key] += 1
        check(int(f['actual_time']) >= int(f['scheduled_time']),
              'a timer woke before its time: %s' % f)
    elif kind == 'aos:message_send' and (f['vpid'], f['sender']) == ping_sender:
        sent[int(f['queue_index'])] = f['sent_time']
    elif kind == 'aos:messages_lost' and key == lost_fetcher:
        lost.append(int(f['count']))
    elif kind == 'aos:message_receive' and key == watcher:
        received.append((int(f['queue_index']), f['sent_time']))
check(not open_calls, 'callbacks started and never ended: %s' % open_calls)
check(pairs[timer] >= 50, 'ping\'s timer: %d start/end pairs, want its 100 pings' % pairs[timer])
check(pairs[watcher] >= 50, 'pong\'s watcher: %d start/end pairs, want most of 100 pings' % pairs[watcher])
check(wakeups[timer] == pairs[timer], 'ping\'s timer: %d timer_wakeup for %d calls' % (wakeups[timer], pairs[timer]))
check(len(received) == pairs[watcher], 'pong: %d message_receive for %d watcher calls' % (len(received), pairs[watcher]))
check(len(sent) >= 100, 'ping sent %d Pings in the trace, want 100' % len(sent))
check(lost == [int(sys.argv[2])], 'lost_fetcher: aos:messages_lost counts %s, want [%s] as it counted' % (lost, sys.argv[2]))
unmatched = [r for r in received if sent.get(r[0]) != r[1]]
check(not unmatched, 'pong received (queue index, sent time) ping never sent: %s' % unmatched[:10])
if problems:
    print('\n'.join(problems)); sys.exit(1)
print('%d events; ping timer calls %d, pong watcher calls %d, %d Pings sent, all received ones matched; %d lost by the fetcher'
      % (len(events), pairs[timer], pairs[watcher], len(sent), lost[0]))
PY
finish
