#!/usr/bin/env python3
"""UDP datagrams across a link, measured: netdelay_test's tool.

  udp_probe.py receive PORT COUNT [--echo] [--timeout_s=S]   one line
      "SEQ ONE_WAY_NS" per datagram, in arrival order; --echo sends each
      back. Ends after COUNT datagrams or S seconds of silence (default 2).
  udp_probe.py send HOST PORT COUNT INTERVAL_MS [--echo] [--timeout_s=S]
      sends datagrams 0..COUNT-1 every INTERVAL_MS; with --echo, one line
      "SEQ RTT_NS" per echo and the RTT percentiles on stderr, and ends
      once every echo is back or after S seconds with none (default 2).
  udp_probe.py drops PERCENT SEED COUNT   the packet indices netdelay drops
      (tools/netdelay/seeded_loss.h), one a line.

Times are CLOCK_MONOTONIC, which two network namespaces share, so the
receiver's one-way figure is exact.
"""
import select
import socket
import struct
import sys
import time

_FORMAT = "!Qq"  # sequence number, sender's CLOCK_MONOTONIC in ns
_MASK = (1 << 64) - 1


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def drops(percent, seed, index):
    """SeededLoss::Drops: SplitMix64 of (seed, index) below percent/100."""
    z = (seed + (index + 1) * 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    return (z >> 11) / 2.0**53 < percent / 100.0


def receive(port, count, echo, timeout_s):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    sock.bind(("0.0.0.0", port))
    print("listening", file=sys.stderr, flush=True)
    sock.settimeout(timeout_s)
    for _ in range(count):
        try:
            data, peer = sock.recvfrom(64)
        except socket.timeout:
            break
        arrival = now_ns()
        seq, sent = struct.unpack(_FORMAT, data[:16])
        if echo:
            sock.sendto(data, peer)
        print(seq, arrival - sent, flush=True)


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100.0 * len(ordered)))]


def send(host, port, count, interval_ms, echo, timeout_s):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((host, port))
    rtts = []
    start = now_ns()
    interval = int(interval_ms * 1e6)
    seq = 0
    last_activity = now_ns()
    while seq < count or (echo and len(rtts) < count):
        now = now_ns()
        if seq < count and now >= start + seq * interval:
            sock.send(struct.pack(_FORMAT, seq, now))
            seq += 1
            continue
        if seq < count:
            timeout = (start + seq * interval - now) / 1e9
        elif now - last_activity > timeout_s * 1e9:
            break  # the rest are lost
        else:
            timeout = 0.1
        readable, _, _ = select.select([sock], [], [], timeout)
        if readable:
            data = sock.recv(64)
            arrival = now_ns()
            last_activity = arrival
            echoed, sent = struct.unpack(_FORMAT, data[:16])
            rtts.append(arrival - sent)
            print(echoed, arrival - sent, flush=True)
    if rtts:
        print("rtt us over %d echoes: min %.1f p50 %.1f p90 %.1f p99 %.1f "
              "p99.9 %.1f max %.1f" % (
                  len(rtts), min(rtts) / 1e3, percentile(rtts, 50) / 1e3,
                  percentile(rtts, 90) / 1e3, percentile(rtts, 99) / 1e3,
                  percentile(rtts, 99.9) / 1e3, max(rtts) / 1e3),
              file=sys.stderr)


def main(argv):
    echo = "--echo" in argv
    timeout_s = 2.0
    args = []
    try:
        for arg in argv[1:]:
            if arg == "--echo":
                continue
            if arg.startswith("--timeout_s="):
                timeout_s = float(arg[len("--timeout_s="):])
                if not timeout_s > 0:
                    raise ValueError(arg)
                continue
            args.append(arg)
        if args[0] == "receive" and len(args) == 3:
            receive(int(args[1]), int(args[2]), echo, timeout_s)
        elif args[0] == "send" and len(args) == 5:
            send(args[1], int(args[2]), int(args[3]), float(args[4]), echo,
                 timeout_s)
        elif args[0] == "drops" and len(args) == 4:
            for i in range(int(args[3])):
                if drops(float(args[1]), int(args[2]), i):
                    print(i)
        else:
            raise IndexError
    except (IndexError, ValueError):
        print(__doc__, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
