#!/bin/bash
# netdelay through tools/netns_pair.sh, as root: two namespaces with 2 ms
# each way, 200 UDP datagrams from NAME1 to NAME2 and back arrive all, in
# order, each no sooner than the delay allows (a lower bound: behaviour, not
# wall-clock luck); then 10% loss with a fixed seed drops exactly the
# datagrams SeededLoss picks, and SIGTERM accepts what netdelay still holds.
# netdelay's flag errors are checked first, which needs no root. Without
# root (or ip netns, iptables) it says why it skips the rest and passes.
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
export NETDELAY="${root}/tools/netdelay/netdelay"
netns_pair="${root}/tools/netns_pair.sh"
probe="${root}/tools/netdelay/udp_probe.py"

# --- Flags: --help, and one line naming the flag for a bad value.
"${NETDELAY}" --help >"${tmp}/out" 2>&1
status=$?
[[ ${status} == 0 ]] || fail "--help exited ${status}"
grep -q 'NFQUEUE' "${tmp}/out" || fail "--help does not say what it reads"
for bad in --delay_ms=-1 --loss_percent=101 --queue=70000; do
  "${NETDELAY}" "${bad}" >"${tmp}/out" 2>"${tmp}/err"
  status=$?
  [[ ${status} == 1 ]] || fail "${bad} exited ${status}, want 1"
  [[ $(wc -l <"${tmp}/err") == 1 ]] || fail "${bad}: not one line: $(cat "${tmp}/err")"
  grep -q -- "${bad%%=*}=" "${tmp}/err" || fail "${bad} is not named: $(cat "${tmp}/err")"
done

# --- The link, as root.
skip() {
  echo "SKIPPED the network part: $*"
  finish
}
[[ "$(id -u)" == 0 ]] || skip "not root (needs ip netns and iptables)"
command -v ip >/dev/null || skip "no ip (Debian package iproute2)"
command -v iptables-legacy >/dev/null || command -v iptables >/dev/null ||
  skip "no iptables (Debian package iptables)"
command -v python3 >/dev/null || skip "no python3"

# netdelay even where the kernel has netem: it is what is under test.
export NETNS_PAIR_DELAY=netdelay NETDELAY_SEED=5
name="ndt$$"
name="${name:0:12}"
at_exit '"${netns_pair}" down "${name}" 2>/dev/null'

# How long the probes wait for a datagram before they give up: only a
# broken link waits that long (every count below is exact).
readonly probe_timeout=--timeout_s=30

# Starts the receiver in NAME2 (arguments: COUNT [--echo]) and waits, at
# most 60 s, until it listens.
start_receiver() {
  # Not the last receiver's "listening": this one's file starts empty.
  : >"${tmp}/receiver_err"
  ip netns exec "${name}2" python3 "${probe}" receive 5000 "$@" \
    "${probe_timeout}" >"${tmp}/received" 2>"${tmp}/receiver_err" &
  receiver=$!
  kill_at_exit "${receiver}"
  wait_for listening "${tmp}/receiver_err" ||
    fail "the receiver did not start in 60 s: $(cat "${tmp}/receiver_err")"
}


# Delay: 2 ms each way, 200 echoed datagrams 0.2 ms apart (ten in flight).
if ! "${netns_pair}" up "${name}" 2 2>"${tmp}/up"; then
  fail "up ${name} 2: $(cat "${tmp}/up")"
  finish
fi
start_receiver 200 --echo
ip netns exec "${name}1" python3 "${probe}" send 10.213.0.2 5000 200 0.2 \
  --echo "${probe_timeout}" >"${tmp}/echoed" 2>"${tmp}/sender_err" ||
  fail "the sender failed: $(cat "${tmp}/sender_err")"
wait "${receiver}"
seq 0 199 >"${tmp}/all"
cut -d' ' -f1 "${tmp}/received" | diff -q - "${tmp}/all" >/dev/null ||
  fail "NAME2 did not receive 0..199 in order: $(cut -d' ' -f1 "${tmp}/received" | tr '\n' ' ')"
cut -d' ' -f1 "${tmp}/echoed" | diff -q - "${tmp}/all" >/dev/null ||
  fail "NAME1 did not get 0..199 back in order: $(cut -d' ' -f1 "${tmp}/echoed" | tr '\n' ' ')"
early="$(awk '$2 < 2000000' "${tmp}/received")"
[[ -z "${early}" ]] || fail "one-way ns under 2 ms: ${early}"
early="$(awk '$2 < 4000000' "${tmp}/echoed")"
[[ -z "${early}" ]] || fail "round trip ns under 4 ms: ${early}"
echo "2 ms each way: $(cat "${tmp}/sender_err")"
"${netns_pair}" down "${name}" 2>"${tmp}/down"
for i in 1 2; do
  grep -q "^${name}${i}: netdelay: queue ${i}: delayed 200, dropped 0," "${tmp}/down" ||
    fail "netdelay in ${name}${i} did not count 200 delayed: $(cat "${tmp}/down")"
done

# Loss: 1 ms and 10% with seed 5; 200 datagrams one way, not echoed. The
# datagrams lost are exactly those SeededLoss drops for indices 0..199.
python3 "${probe}" drops 10 5 200 >"${tmp}/dropped"
lost=$(wc -l <"${tmp}/dropped")
((lost >= 10 && lost <= 30)) || fail "seed 5 drops ${lost} of 200 at 10%"
grep -vxFf "${tmp}/dropped" "${tmp}/all" >"${tmp}/expected"
if ! "${netns_pair}" up "${name}" 1 10 2>"${tmp}/up"; then
  fail "up ${name} 1 10: $(cat "${tmp}/up")"
  finish
fi
# The receiver ends once the datagrams not dropped are in: waiting for
# silence instead would make every run last the probe's timeout.
start_receiver $((200 - lost))
ip netns exec "${name}1" python3 "${probe}" send 10.213.0.2 5000 200 0.2 \
  2>"${tmp}/sender_err" || fail "the sender failed: $(cat "${tmp}/sender_err")"
wait "${receiver}"
cut -d' ' -f1 "${tmp}/received" | diff -q - "${tmp}/expected" >/dev/null ||
  fail "NAME2 received $(cut -d' ' -f1 "${tmp}/received" | tr '\n' ' '), want $(tr '\n' ' ' <"${tmp}/expected")"
early="$(awk '$2 < 1000000' "${tmp}/received")"
[[ -z "${early}" ]] || fail "one-way ns under 1 ms: ${early}"
loss_failures=${failures}
"${netns_pair}" down "${name}" 2>"${tmp}/down"
grep -q "^${name}1: netdelay: queue 1: delayed $((200 - lost)), dropped ${lost}," "${tmp}/down" ||
  fail "netdelay in ${name}1 did not count ${lost} dropped: $(cat "${tmp}/down")"
((failures > loss_failures)) ||
  echo "10% loss, seed 5: ${lost} of 200 dropped, the ones SeededLoss picks"

# SIGTERM accepts what netdelay holds: a datagram delayed 300 s arrives
# once NAME1's netdelay is told to stop (the receiver waits 30 s for it:
# held, it would come far later).
if ! "${netns_pair}" up "${name}" 300000 2>"${tmp}/up"; then
  fail "up ${name} 300000: $(cat "${tmp}/up")"
  finish
fi
start_receiver 1
ip netns exec "${name}1" python3 "${probe}" send 10.213.0.2 5000 1 0 \
  2>"${tmp}/sender_err" || fail "the sender failed: $(cat "${tmp}/sender_err")"
# No wait needed: the NFQUEUE rule runs inside the sender's send(), so the
# datagram's netlink message is in netdelay's socket before the sender
# exits, and netdelay reads its socket before it acts on SIGTERM.
kill -TERM "$(cat "/run/aos-netns/${name}/netdelay1.pid")"
wait "${receiver}"
if [[ "$(cut -d' ' -f1 "${tmp}/received")" == 0 ]]; then
  echo "SIGTERM: the held datagram was accepted"
else
  fail "the held datagram was not accepted at SIGTERM: '$(cat "${tmp}/received")'"
fi
"${netns_pair}" down "${name}" 2>/dev/null
finish
