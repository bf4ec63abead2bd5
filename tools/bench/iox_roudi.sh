# shellcheck shell=bash
# Starting and stopping iceoryx's broker, iox-roudi, for tools/bench/ipc.sh
# and the IPC bench's test; sourced, not run.
#
#   source tools/bench/iox_roudi.sh
#   roudi_start tools/bench/iox_roudi.toml "${work}/roudi.log" || exit 1
#   trap roudi_stop EXIT
#
# iceoryx 2.0 allows one RouDi per machine (its shared memory,
# /dev/shm/iceoryx_mgmt and /dev/shm/<user>, and its lock and socket in
# /tmp have fixed names). If one already runs (someone else's), roudi_start
# says so in one line on stderr and returns 2, leaving it and its files
# alone; roudi_stop then does nothing.

roudi_pid=""

_roudi_already_running() {
  echo "iox-roudi is already running on this machine (iceoryx 2.0 allows one; someone else's is left alone): stop it or wait for it" >&2
}

# Starts iox-roudi with config file $1, its output in $2, and waits until it
# serves clients. Returns 1 (saying why) if it cannot start, 2 if another
# RouDi runs.
roudi_start() {
  local config="$1" log="$2"
  if ! command -v iox-roudi >/dev/null; then
    echo "no iox-roudi: apt-get install iceoryx (tools/aos.sh setup installs it)" >&2
    return 1
  fi
  # A running RouDi holds a flock on /tmp/roudi.lock; asking first spares
  # the second RouDi's abort (and the shell's line about it).
  if [[ -e /tmp/roudi.lock ]] && ! flock -n /tmp/roudi.lock true; then
    _roudi_already_running
    return 2
  fi
  iox-roudi -c "${config}" -l info >"${log}" 2>&1 &
  roudi_pid=$!
  local i
  for ((i = 0; i < 100; i++)); do
    if grep -q "RouDi is ready for clients" "${log}"; then return 0; fi
    if ! kill -0 "${roudi_pid}" 2>/dev/null; then
      wait "${roudi_pid}" 2>/dev/null || true
      roudi_pid=""
      if grep -q "ROUDI_STILL_RUNNING\|Could not acquire lock" "${log}"; then
        _roudi_already_running
        return 2
      fi
      echo "iox-roudi did not start: $(tail -n 1 "${log}")" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "iox-roudi did not become ready in 10 s (its output: ${log})" >&2
  roudi_stop
  return 1
}

# Stops the RouDi roudi_start started (SIGTERM, then SIGKILL after 5 s) and,
# if it was killed before it could clean up, removes its shared memory,
# lock and socket. Nothing if none was started.
roudi_stop() {
  [[ -n "${roudi_pid}" ]] || return 0
  local i
  kill -TERM "${roudi_pid}" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    kill -0 "${roudi_pid}" 2>/dev/null || break
    sleep 0.1
  done
  local killed=0
  if kill -0 "${roudi_pid}" 2>/dev/null; then
    kill -KILL "${roudi_pid}" 2>/dev/null || true
    killed=1
  fi
  wait "${roudi_pid}" 2>/dev/null || true
  roudi_pid=""
  if ((killed)); then
    rm -f /dev/shm/iceoryx_mgmt "/dev/shm/$(id -un)" /tmp/roudi \
      /tmp/roudi.lock /tmp/iox-unique-roudi.lock
  fi
}
