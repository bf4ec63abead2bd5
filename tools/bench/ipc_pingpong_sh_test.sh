#!/bin/bash
# One short ping/pong of each side of the IPC bench, in both modes: ours
# (aos_pingpong over a --shm_base of the test's own) and iceoryx's
# (iceoryx_pingpong through an iox-roudi the test starts and stops). Checks
# that each pair finishes and its JSON counts every message, never how
# fast. iceoryx's half is skipped, saying why, without iox-roudi or when
# another one runs (iceoryx 2.0 allows one per machine).
source "${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/testing/shell_test_lib.sh"
source "${root}/tools/bench/iox_roudi.sh"

# run_pair PROGRAM NAME MODE EXTRA_FLAGS...: pong, then ping once pong is
# ready; both must exit 0. Pong's result in ${tmp}/NAME_MODE_pong.json.
run_pair() {
  local program="$1" name="$2" mode="$3"
  shift 3
  local out="${tmp}/${name}_${mode}"
  rm -f "${out}_ready"
  "${root}/tools/bench/${program}" --role=pong --mode="${mode}" \
    --count=200 --rate_hz=2000 --seconds=0.2 --json="${out}_pong.json" \
    --ready_file="${out}_ready" "$@" >"${out}_pong.log" 2>&1 &
  local pong=$!
  kill_at_exit "${pong}"
  wait_until test -e "${out}_ready" || fatal "${name} pong never got ready: $(cat "${out}_pong.log")"
  "${root}/tools/bench/${program}" --role=ping --mode="${mode}" \
    --count=200 --rate_hz=2000 --seconds=0.2 --json="${out}_ping.json" \
    "$@" >"${out}_ping.log" 2>&1 ||
    fail "${name} ${mode} ping exited $?: $(cat "${out}_ping.log")"
  wait "${pong}" || fail "${name} ${mode} pong exited $?: $(cat "${out}_pong.log")"
}

# check_result NAME: the latency run counted 200 wakeups and round trips,
# the flood received something and no more than it sent.
check_result() {
  local name="$1"
  python3 - "${tmp}/${name}" <<'PY' || fail "${name}: results are not what they should be"
import json, sys
base = sys.argv[1]
pong = json.load(open(base + "_latency_pong.json"))
ping = json.load(open(base + "_latency_ping.json"))
assert pong["role"] == "pong" and pong["mode"] == "latency", pong
assert pong["latency"]["count"] == 200, pong["latency"]["count"]
assert ping["latency"]["count"] == 200, ping["latency"]["count"]
assert pong["latency"]["min_us"] > 0, pong["latency"]
flood = json.load(open(base + "_throughput_pong.json"))
assert flood["received"] > 0 and flood["lost"] >= 0, flood
assert flood["messages_per_second"] > 0, flood
PY
}

run_pair aos_pingpong aos latency --shm_base="${tmp}/shm"
run_pair aos_pingpong aos throughput --shm_base="${tmp}/shm"
check_result aos

expect_one_line_error "--role=pang is not one of ping, pong" \
  "${root}/tools/bench/iceoryx_pingpong" --role=pang
expect_one_line_error "--payload_bytes=8 is not 16-65536" \
  "${root}/tools/bench/aos_pingpong" --role=ping --payload_bytes=8

if ! command -v iox-roudi >/dev/null; then
  echo "SKIPPED the iceoryx half: no iox-roudi (apt-get install iceoryx)"
  finish
fi
roudi_start "${root}/tools/bench/iox_roudi.toml" "${tmp}/roudi.log"
case $? in
  0) at_exit roudi_stop ;;
  2)
    echo "SKIPPED the iceoryx half: another iox-roudi runs on this machine"
    finish
    ;;
  *) fatal "iox-roudi did not start: $(cat "${tmp}/roudi.log")" ;;
esac
run_pair iceoryx_pingpong iceoryx latency
run_pair iceoryx_pingpong iceoryx throughput
check_result iceoryx
finish
