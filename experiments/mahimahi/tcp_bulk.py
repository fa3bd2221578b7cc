#!/usr/bin/env python3
"""A bulk TCP sender that samples the kernel's TCP_INFO, and its receiver.

Outside the Mahimahi shell run `tcp_bulk.py recv PORT SECONDS OUT` (accepts one connection, reads
and discards until the sender closes or SECONDS pass, writes `bytes seconds` to OUT). Inside it run
`tcp_bulk.py send DEST PORT CC SECONDS CSV`: connect to DEST:PORT, choose the congestion control CC
(setsockopt TCP_CONGESTION: reno, cubic, bbr, ...), send for SECONDS, and write a TCP_INFO sample
every 10 ms to CSV (the last row is taken after the sending stops). With CC = bbr each row also has
BBR's own state from TCP_CC_INFO (`struct tcp_bbr_info`): its bandwidth estimate in payload bytes/s,
min_rtt in us, and the pacing and cwnd gains in units of 1/256 (BBR_UNIT).
"""

import math
import socket
import struct
import sys
import threading
import time

SAMPLE_S = 0.010
CHUNK = bytes(1 << 16)

# struct tcp_info as include/uapi/linux/tcp.h lays it out (through total_rto_time, Linux >= 6.7).
INFO = struct.Struct("<8B24I2Q2Q2I4IQ3Q2I2Q2I2I2I2HI")
INFO_FIELDS = (
    ["state", "ca_state", "retransmits", "probes", "backoff", "options", "wscale", "flags"]
    + ["rto", "ato", "snd_mss", "rcv_mss", "unacked", "sacked", "lost", "retrans", "fackets"]
    + ["last_data_sent", "last_ack_sent", "last_data_recv", "last_ack_recv"]
    + ["pmtu", "rcv_ssthresh", "rtt", "rttvar", "snd_ssthresh", "snd_cwnd", "advmss", "reordering"]
    + ["rcv_rtt", "rcv_space", "total_retrans", "pacing_rate", "max_pacing_rate"]
    + ["bytes_acked", "bytes_received", "segs_out", "segs_in"]
    + ["notsent_bytes", "min_rtt", "data_segs_in", "data_segs_out", "delivery_rate"]
    + ["busy_time", "rwnd_limited", "sndbuf_limited", "delivered", "delivered_ce"]
    + ["bytes_sent", "bytes_retrans", "dsack_dups", "reord_seen", "rcv_ooopack", "snd_wnd"]
    + ["rcv_wnd", "rehash", "total_rto", "total_rto_recoveries", "total_rto_time"]
)
COLUMNS = [
    "t_s", "ca_state", "snd_cwnd", "snd_ssthresh", "rtt", "rttvar", "min_rtt", "rto", "unacked",
    "sacked", "lost", "retrans", "total_retrans", "total_rto", "total_rto_recoveries",
    "delivery_rate", "pacing_rate", "bytes_acked", "bytes_sent", "bytes_retrans", "data_segs_out",
    "snd_mss", "dsack_dups", "reord_seen",
]
# getsockopt(TCP_CC_INFO) (include/uapi/linux/tcp.h: 26) for bbr: struct tcp_bbr_info in inet_diag.h
# (bbr_bw_lo, bbr_bw_hi, bbr_min_rtt, bbr_pacing_gain, bbr_cwnd_gain).
TCP_CC_INFO = 26
BBR_INFO = struct.Struct("<5I")
BBR_COLUMNS = ["bbr_bw", "bbr_min_rtt", "bbr_pacing_gain", "bbr_cwnd_gain"]


def bad(option, text, want):
    print(f"tcp_bulk.py: option {option}: `{text}` is not {want}", file=sys.stderr)
    sys.exit(2)


def positive(option, text):
    try:
        if math.isfinite(float(text)) and float(text) > 0:
            return float(text)
    except ValueError:
        pass
    bad(option, text, "a positive number")


def port(text):
    if not text.isdigit() or not 0 < int(text) < 65536:
        bad("PORT", text, "a port number (1..65535)")
    return int(text)


def tcp_info(s):
    raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, INFO.size)
    if len(raw) < INFO.size:
        print(f"tcp_bulk.py: TCP_INFO is {len(raw)} bytes, {INFO.size} wanted (Linux >= 6.7)",
              file=sys.stderr)
        sys.exit(1)
    return dict(zip(INFO_FIELDS, INFO.unpack(raw)))


def bbr_info(s):
    raw = s.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, BBR_INFO.size)
    if len(raw) < BBR_INFO.size:
        print(f"tcp_bulk.py: TCP_CC_INFO is {len(raw)} bytes, {BBR_INFO.size} wanted (tcp_bbr_info)",
              file=sys.stderr)
        sys.exit(1)
    lo, hi, min_rtt, pacing_gain, cwnd_gain = BBR_INFO.unpack(raw)
    return {"bbr_bw": hi << 32 | lo, "bbr_min_rtt": min_rtt, "bbr_pacing_gain": pacing_gain,
            "bbr_cwnd_gain": cwnd_gain}


def send(dest, port_text, cc, seconds_text, csv_path):
    p, seconds = port(port_text), positive("SECONDS", seconds_text)
    try:
        out = open(csv_path, "w")
    except OSError as e:
        bad("CSV", csv_path, f"a writable file ({e.strerror})")
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, cc.encode())
    except OSError:
        bad("CC", cc, "a congestion control this kernel lets an unprivileged socket choose "
            "(net.ipv4.tcp_allowed_congestion_control)")
    try:
        s.connect((dest, p))
    except OSError as e:
        print(f"tcp_bulk.py: cannot connect to {dest}:{p}: {e.strerror or e}", file=sys.stderr)
        sys.exit(1)
    stop = threading.Event()

    def writer():
        while not stop.is_set():
            try:
                s.send(CHUNK)
            except socket.timeout:
                continue
            except OSError:
                return

    s.settimeout(0.05)
    start = time.monotonic()
    threading.Thread(target=writer, daemon=True).start()
    columns = COLUMNS + (BBR_COLUMNS if cc == "bbr" else [])
    out.write(",".join(columns) + "\n")
    n = 0
    while True:
        now = time.monotonic() - start
        done = now >= seconds
        if done:
            stop.set()
        info = tcp_info(s)
        info["t_s"] = f"{now:.4f}"
        if cc == "bbr":
            info.update(bbr_info(s))
        out.write(",".join(str(info[c]) for c in columns) + "\n")
        if done:
            break
        n += 1
        time.sleep(max(0.0, start + n * SAMPLE_S - time.monotonic()))
    out.close()
    s.close()


def recv(port_text, seconds_text, out_path):
    p, seconds = port(port_text), positive("SECONDS", seconds_text)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("0.0.0.0", p))
    ls.listen(1)
    ls.settimeout(seconds)
    try:
        c, _ = ls.accept()
    except socket.timeout:
        print(f"tcp_bulk.py: no sender connected within {seconds:g} s", file=sys.stderr)
        sys.exit(1)
    c.settimeout(1.0)
    start, total = time.monotonic(), 0
    while time.monotonic() - start < seconds:
        try:
            got = c.recv(1 << 20)
        except socket.timeout:
            continue
        if not got:
            break
        total += len(got)
    with open(out_path, "w") as f:
        f.write(f"{total} {time.monotonic() - start:.4f}\n")


def main(argv):
    if len(argv) == 6 and argv[0] == "send":
        send(*argv[1:])
    elif len(argv) == 4 and argv[0] == "recv":
        recv(*argv[1:])
    else:
        print("usage: tcp_bulk.py send DEST PORT CC SECONDS CSV | recv PORT SECONDS OUT",
              file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main(sys.argv[1:])
