#!/usr/bin/env python3
"""Offer a known UDP load to a Mahimahi link, or receive it.

Inside `mm-link ... -- sh -c '...'` run `udp_load.py send DEST SECONDS PATTERN`; outside (the
receiver on $MAHIMAHI_BASE) run `udp_load.py recv SECONDS`. Datagrams carry 1400 payload bytes, so
Mahimahi's uplink sees 1432-byte packets (1400 + 28 UDP/IP + 4 TUN packet information).

PATTERN is `cbr:MBPS` (a constant rate) or `onoff:MBPS:ON_MS:OFF_MS` (that rate during ON_MS, then
silence for OFF_MS, repeated). Sends are scheduled from the monotonic clock at start, so a late
wake-up sends the datagrams it owes at once rather than shifting the rest.
"""

import math
import socket
import sys
import time

PAYLOAD = 1400
PORT = 9000


def bad(option, text, want):
    print(f"udp_load.py: option {option}: `{text}` is not {want}", file=sys.stderr)
    sys.exit(2)


def schedule(pattern, seconds):
    """Offsets (s) of every datagram of the run."""
    want = "cbr:MBPS or onoff:MBPS:ON_MS:OFF_MS with positive numbers"
    kind, *args = pattern.split(":")
    if kind not in ("cbr", "onoff") or len(args) != (1 if kind == "cbr" else 3):
        bad("PATTERN", pattern, want)
    try:
        nums = [float(a) for a in args]
    except ValueError:
        bad("PATTERN", pattern, want)
    if not all(math.isfinite(n) and n > 0 for n in nums):
        bad("PATTERN", pattern, want)
    gap = PAYLOAD * 8 / (nums[0] * 1e6)
    on, off = (nums[1] / 1e3, nums[2] / 1e3) if kind == "onoff" else (seconds, 0.0)
    times, t = [], 0.0
    while t < seconds:
        if (t % (on + off)) < on:
            times.append(t)
            t += gap
        else:
            t += (on + off) - (t % (on + off))
    return times


def positive_seconds(text):
    try:
        if math.isfinite(float(text)) and float(text) > 0:
            return float(text)
    except ValueError:
        pass
    bad("SECONDS", text, "a positive number of seconds")


def send(dest, seconds, pattern):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    data = bytes(PAYLOAD)
    times = schedule(pattern, positive_seconds(seconds))
    start = time.monotonic()
    for n, off in enumerate(times):
        wait = start + off - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        try:
            s.sendto(n.to_bytes(4, "big") + data[4:], (dest, PORT))
        except OSError as e:
            # A `--once` link ends with its trace and takes the route with it.
            print(f"udp_load.py: stopped after {n} datagrams: {e.strerror}", file=sys.stderr)
            return


def recv(seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", PORT))
    s.settimeout(1.0)
    end, got = time.monotonic() + positive_seconds(seconds), 0
    while time.monotonic() < end:
        try:
            s.recv(2048)
            got += 1
        except socket.timeout:
            pass
    print(f"received {got} datagrams", file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "send" and len(sys.argv) == 5:
        send(*sys.argv[2:])
    elif len(sys.argv) == 3 and sys.argv[1] == "recv":
        recv(sys.argv[2])
    else:
        print("usage: udp_load.py send DEST SECONDS PATTERN | udp_load.py recv SECONDS", file=sys.stderr)
        sys.exit(2)
