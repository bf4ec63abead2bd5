#!/bin/bash
# Two network namespaces joined by a veth pair: how aos runs and tests two
# nodes "on two machines" on one (as root).
#
#   tools/netns_pair.sh up NAME [DELAY_MS]   create NAME1 and NAME2
#   tools/netns_pair.sh down NAME            remove them (and the link)
#
# NAME1 holds interface NAME1v with 10.213.0.1/24, NAME2 holds NAME2v with
# 10.213.0.2/24 (so NAME is at most 12 characters). With DELAY_MS, each end
# delays what it sends by DELAY_MS milliseconds (tc netem), i.e. each way of
# the link. Run a program in one: ip netns exec NAME1 PROGRAM ARGS...
set -euo pipefail

usage() {
  sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 1
}

fail() {
  echo "netns_pair.sh: $*" >&2
  exit 1
}

[[ $# -ge 2 ]] || usage
readonly command="$1" name="$2" delay_ms="${3:-}"
[[ "${name}" =~ ^[a-z][a-z0-9]{0,11}$ ]] ||
  fail "NAME '${name}' must be 1-12 lowercase letters and digits"
[[ "$(id -u)" == 0 ]] || fail "needs root (ip netns)"
command -v ip >/dev/null || fail "needs ip (Debian package iproute2)"

case "${command}" in
  up)
    [[ -z "${delay_ms}" || "${delay_ms}" =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
      fail "DELAY_MS '${delay_ms}' is not a number of milliseconds"
    "$0" down "${name}" 2>/dev/null || true
    ip netns add "${name}1"
    ip netns add "${name}2"
    ip link add "${name}1v" netns "${name}1" type veth \
      peer name "${name}2v" netns "${name}2"
    for i in 1 2; do
      ip -n "${name}${i}" link set lo up
      ip -n "${name}${i}" addr add "10.213.0.${i}/24" dev "${name}${i}v"
      ip -n "${name}${i}" link set "${name}${i}v" up
      if [[ -n "${delay_ms}" ]]; then
        ip netns exec "${name}${i}" tc qdisc add dev "${name}${i}v" root \
          netem delay "${delay_ms}ms"
      fi
    done
    ;;
  down)
    for i in 1 2; do
      if ip netns list | grep -qw "${name}${i}"; then
        ip netns delete "${name}${i}"
      fi
    done
    ;;
  *) usage ;;
esac
