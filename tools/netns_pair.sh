#!/bin/bash
# Two network namespaces joined by a veth pair: how aos runs and tests two
# nodes "on two machines" on one (as root).
#
#   tools/netns_pair.sh up NAME [DELAY_MS [LOSS_PERCENT]]   create NAME1, NAME2
#   tools/netns_pair.sh down NAME                  remove them (and the link)
#
# NAME1 holds interface NAME1v with 10.213.0.1/24, NAME2 holds NAME2v with
# 10.213.0.2/24 (so NAME is at most 12 characters). With DELAY_MS (fractions
# allowed), each end delays what it sends by DELAY_MS milliseconds, i.e. each
# way of the link, and drops LOSS_PERCENT of it. This is tc netem when the
# kernel has it; otherwise netdelay (tools/netdelay) in each namespace, fed
# by an iptables(-legacy) NFQUEUE rule on NAMEiv: it delays IPv4 only (ARP and
# IPv6 pass at once), and drops by packet index with seed NETDELAY_SEED
# (default 1), so a run loses the same packets every time. Environment:
#   NETDELAY=PATH           the netdelay binary (bazel-bin/tools/netdelay/
#                           netdelay); needed only when netdelay is used
#   NETNS_PAIR_DELAY=auto|netem|netdelay   which to use (default auto)
#   NETDELAY_PRIORITY=N     run netdelay at SCHED_FIFO priority N (default
#                           0: normal); its p99 wakeup error falls to the
#                           machine's timer floor under load
# netdelay's pid and log (its counts, printed by down) are in
# /run/aos-netns/NAME/. Run a program in one: ip netns exec NAME1 PROGRAM ...
set -euo pipefail

usage() {
  sed -n '2,/^[^#]/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit 1
}

fail() {
  echo "netns_pair.sh: $*" >&2
  exit 1
}

[[ $# -ge 2 ]] || usage
readonly command="$1" name="$2" delay_ms="${3:-}" loss_percent="${4:-0}"
readonly run_dir="/run/aos-netns/${name}"
readonly mode="${NETNS_PAIR_DELAY:-auto}"
[[ "${name}" =~ ^[a-z][a-z0-9]{0,11}$ ]] ||
  fail "NAME '${name}' must be 1-12 lowercase letters and digits"
[[ "${mode}" =~ ^(auto|netem|netdelay)$ ]] ||
  fail "NETNS_PAIR_DELAY '${mode}' is not auto, netem or netdelay"
[[ "$(id -u)" == 0 ]] || fail "needs root (ip netns)"
command -v ip >/dev/null || fail "needs ip (Debian package iproute2)"

# Starts netdelay in namespace NAME$1 on NFQUEUE queue $1, waits (at most
# 60 s) until it has bound the queue, then sends NAME$1v's outgoing IPv4 to
# it.
start_netdelay() {
  local i="$1" pid
  [[ -n "${NETDELAY:-}" ]] ||
    fail "this kernel has no tc netem: set NETDELAY to the netdelay binary (bazel build //tools/netdelay, then NETDELAY=bazel-bin/tools/netdelay/netdelay)"
  [[ -x "${NETDELAY}" ]] || fail "NETDELAY '${NETDELAY}' is not an executable"
  # Legacy first: it needs no nf_tables queue support in the kernel (both
  # worked on the kernel without netem that this was written for).
  local iptables=iptables-legacy
  command -v "${iptables}" >/dev/null || iptables=iptables
  command -v "${iptables}" >/dev/null ||
    fail "needs iptables-legacy or iptables (Debian package iptables)"
  mkdir -p "${run_dir}"
  # setsid: its own session, so a Ctrl-C meant for our caller reaches it
  # only through down (SIGTERM), after it has released what it holds.
  setsid ip netns exec "${name}${i}" "${NETDELAY}" --queue="${i}" \
    --delay_ms="${delay_ms}" --loss_percent="${loss_percent}" \
    --seed="${NETDELAY_SEED:-1}" --priority="${NETDELAY_PRIORITY:-0}" \
    </dev/null >"${run_dir}/netdelay${i}.log" 2>&1 &
  pid=$!
  echo "${pid}" >"${run_dir}/netdelay${i}.pid"
  for _ in $(seq 1200); do
    grep -q ' ready: ' "${run_dir}/netdelay${i}.log" && break
    kill -0 "${pid}" 2>/dev/null ||
      fail "netdelay in ${name}${i} exited: $(tail -n 1 "${run_dir}/netdelay${i}.log")"
    sleep 0.05
  done
  grep -q ' ready: ' "${run_dir}/netdelay${i}.log" ||
    fail "netdelay in ${name}${i} did not bind queue ${i} within 60 s"
  ip netns exec "${name}${i}" "${iptables}" -t mangle -A POSTROUTING \
    -o "${name}${i}v" -j NFQUEUE --queue-num "${i}"
}

# Stops the netdelay of namespace NAME$1 if one runs (SIGTERM: it accepts
# what it holds and prints its counts, which we pass on to stderr), waiting
# at most 60 s for it to exit.
stop_netdelay() {
  local i="$1" pid
  [[ -f "${run_dir}/netdelay${i}.pid" ]] || return 0
  pid="$(cat "${run_dir}/netdelay${i}.pid")"
  # Only our netdelay: after a reboot the pid may be someone else's.
  if [[ "$(cat "/proc/${pid}/comm" 2>/dev/null)" == netdelay ]]; then
    kill -TERM "${pid}"
    for _ in $(seq 1200); do
      kill -0 "${pid}" 2>/dev/null || break
      sleep 0.05
    done
    tail -n 1 "${run_dir}/netdelay${i}.log" | sed "s/^/${name}${i}: /" >&2
  fi
  rm -f "${run_dir}/netdelay${i}.pid"
}

case "${command}" in
  up)
    [[ -z "${delay_ms}" || "${delay_ms}" =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
      fail "DELAY_MS '${delay_ms}' is not a number of milliseconds"
    [[ "${loss_percent}" =~ ^[0-9]+(\.[0-9]+)?$ ]] &&
      awk -v p="${loss_percent}" 'BEGIN { exit !(p <= 100) }' ||
      fail "LOSS_PERCENT '${loss_percent}' is not a percentage 0-100"
    [[ -n "${delay_ms}" || "${loss_percent}" == 0 ]] ||
      fail "LOSS_PERCENT needs a DELAY_MS before it (0 for none)"
    "$0" down "${name}" 2>/dev/null || true
    # A failed up leaves nothing behind.
    trap '[[ $? == 0 ]] || "$0" down "${name}" >/dev/null 2>&1' EXIT
    ip netns add "${name}1"
    ip netns add "${name}2"
    ip link add "${name}1v" netns "${name}1" type veth \
      peer name "${name}2v" netns "${name}2"
    for i in 1 2; do
      ip -n "${name}${i}" link set lo up
      ip -n "${name}${i}" addr add "10.213.0.${i}/24" dev "${name}${i}v"
      ip -n "${name}${i}" link set "${name}${i}v" up
      [[ -n "${delay_ms}" ]] || continue
      if [[ "${mode}" != netdelay ]] &&
        ip netns exec "${name}${i}" tc qdisc add dev "${name}${i}v" root \
          netem delay "${delay_ms}ms" loss "${loss_percent}%" 2>/dev/null; then
        continue
      fi
      [[ "${mode}" != netem ]] ||
        fail "tc netem failed (is sch_netem in this kernel?)"
      start_netdelay "${i}"
    done
    ;;
  down)
    for i in 1 2; do
      stop_netdelay "${i}"
      if ip netns list | grep -qw "${name}${i}"; then
        ip netns delete "${name}${i}"
      fi
    done
    rm -rf "${run_dir}"
    ;;
  *) usage ;;
esac
