"""The kernel's slow start, ACK by ACK, from a trace trace_tcp.sh recorded: writes the fixture that
`cargo test -p ccscope-cc --test linux_hystart_kernel` replays through ccscope's Cubic.

    python experiments/mahimahi/hystart_trace.py TRACE_TXT OUT_CSV

One bulk connection (the sender's side: tcp_probe lines to port 9001; its data packets: net_dev_start_xmit
lines on `ingress` with paged data). Rows, in time order, microseconds since the first data packet:
`send,t_us,packet` for each data packet (numbered from 0 in sequence order; slow start before its first
loss sends in order) and `ack,t_us,una,nxt,cwnd,ssthresh` for each ACK the sender processed, with the
state tcp_probe saw before it (SND.UNA and SND.NXT in packets, snd_cwnd, snd_ssthresh); an ACK's
acknowledged point is the next ACK's `una`. The rows stop five ACKs after ssthresh was first set.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

MSS = 1448
LINE = re.compile(r" (\d+)\.(\d{6}): (tcp_probe|net_dev_start_xmit): (.*)$")


def fail(where: str, what: str) -> None:
    print(f"error: {where}: {what}", file=sys.stderr)
    raise SystemExit(2)


def fields(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


def read(path: Path) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int, int, int]]]:
    sends, acks = [], []
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        fail(str(path), f"cannot read: {e}")
    for n, line in enumerate(lines, 1):
        m = LINE.search(line)
        if not m:
            continue
        t_us = int(m.group(1)) * 1_000_000 + int(m.group(2))
        f = fields(m.group(4))
        try:
            if m.group(3) == "net_dev_start_xmit":
                # The socket's packets carry their payload in pages; Mahimahi's writes to the tun are linear.
                if f["dev"] == "ingress" and int(f["data_len"]) > 0:
                    sends.append((t_us, int(f["data_len"]), n))
            elif f["dest"].endswith(":9001"):
                acks.append((t_us, int(f["snd_una"], 16), int(f["snd_nxt"], 16), int(f["snd_cwnd"]),
                             int(f["ssthresh"])))
        except (KeyError, ValueError) as e:
            fail(f"{path}:{n}", f"not a tracepoint line with the fields this needs ({e})")
    if not sends or len(acks) < 2:
        fail(str(path), "no data packets or fewer than two ACKs of a connection to port 9001")
    return sends, acks


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    src, out = Path(argv[0]), Path(argv[1])
    if out.exists():
        fail(str(out), "exists; choose a new file")
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        fail(str(tmp), "exists; move it or choose another OUT_CSV")
    sends, acks = read(src)
    isn = acks[0][1]  # SND.UNA at the first ACK: the first data byte
    t0 = sends[0][0]
    exit_at = next((i for i, a in enumerate(acks) if a[4] < 2**31 - 1), None)
    if exit_at is None:
        fail(str(src), "ssthresh never set: slow start did not end in the trace")
    acks = acks[: exit_at + 5]
    rows = []
    for t, una, nxt, cwnd, ssthresh in acks:
        if (una - isn) % MSS or (nxt - isn) % MSS:
            fail(str(src), f"SND.UNA or SND.NXT off a {MSS}-byte packet boundary at t = {t - t0} us")
        rows.append((t - t0, "ack", (una - isn) // MSS, (nxt - isn) // MSS, cwnd, ssthresh))
    last = max(r[3] for r in rows)
    if len(sends) < last:
        fail(str(src), f"{len(sends)} data packets traced, fewer than the {last} the ACKs reach")
    for i, (t, size, n) in enumerate(sends[:last]):
        if size != MSS:
            fail(f"{src}:{n}", f"data packet {i} has {size} bytes, not {MSS}")
        rows.append((t - t0, "send", i))
    rows.sort(key=lambda r: (r[0], r[1] == "ack"))
    text = "event,t_us,packet_or_una,nxt,cwnd,ssthresh\n" + "".join(
        ",".join([r[1], str(r[0])] + [str(x) for x in r[2:]]) + "\n" for r in rows)
    try:
        # "x": a file that appeared there since is not ours to overwrite.
        with tmp.open("x") as f:
            f.write(text)
        tmp.replace(out)
    except OSError as e:
        fail(str(out), f"cannot write: {e}")
    a = acks[exit_at]
    print(f"{out}: {len(sends[:last])} packets, {len(acks)} ACKs; ssthresh first {a[4]} (cwnd {a[3]}) "
          f"at ACK {exit_at} ({(a[0] - t0) / 1e3:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
