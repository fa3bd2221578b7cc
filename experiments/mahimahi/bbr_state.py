"""Kernel BBR's state against ccscope's BBR in the constant-link case (docs/performance.md, "BBR's standing
queue (session 19)"): reads record_tcp.sh bbr runs (TCP_INFO + TCP_CC_INFO samples, the uplink log and, when
there, a tracefs dump of `tcp:tcp_probe` and `net:net_dev_start_xmit` as `CC-TRACE-qN-rK.trace`) and the
per-ACK CSV of ccscope's `bbr_state` example on the same scenario, and prints one row per run:

    python experiments/mahimahi/bbr_state.py RUN_DIR... [--ccscope STATE.csv]... [--summary out.csv]

Over PROBE_BW (from 5 s on, PROBE_RTT and the 200 ms after it left out): the bandwidth estimate over the
link's 1000 packets/s, the pacing-gain phases, min_rtt, the cwnd against its target without the
ACK-aggregation term (2 x ceil(bw x min_rtt) + tcp_bbr.c's quantization budget), the flight against the
cwnd on each ACK, the link's queueing delay, and the ACKs' timing: gaps between ACKs at the sender and how
far each ACK's arrival strays from its packet's departure from the link (1 ms log resolution).
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

MSS, WIRE = 1448, 1504
LINK_PPS = 1000.0  # const12: one 1504-byte opportunity per ms
FROM_S = 5.0
RUN = re.compile(r"^bbr-const12-q(\d+)-r(\d+)\.csv$")
PROBE = re.compile(r" (\d+\.\d+): tcp_probe: .* snd_nxt=(0x[0-9a-f]+) snd_una=(0x[0-9a-f]+) snd_cwnd=(\d+)")
XMIT = re.compile(r" (\d+\.\d+): net_dev_start_xmit: dev=ingress .* data_len=(\d+)")
# tcp_bbr.c bbr_pacing_gain x BBR_UNIT (256) and the PROBE_RTT / STARTUP / DRAIN gains.
PHASES = {320: "1.25", 192: "0.75", 256: "1"}


def bad(where: str, what: str) -> None:
    raise ValueError(f"{where}: {what}")


def columns(where: str, rows: list[dict], kinds: dict[str, type]) -> dict[str, np.ndarray]:
    """The named columns of csv.DictReader rows as arrays; a missing or unparsable field names its line."""
    out = {}
    for k, kind in kinds.items():
        vals = []
        for n, r in enumerate(rows, 2):  # line 1 is the header
            v = r.get(k)
            if v is None:
                bad(f"{where}:{n}", f"{k}: missing")
            try:
                vals.append(kind(v))
            except ValueError:
                bad(f"{where}:{n}", f"{k}: not a number: {v!r}")
        out[k] = np.array(vals)
    return out


def budget(cwnd: int, phase0: bool) -> int:
    # tcp_bbr.c bbr_quantization_budget with tso_segs_goal 2 (below 1 ms of data per skb): +3 x 2, even, +2 in phase 0.
    c = cwnd + 6
    c = (c + 1) & ~1
    return c + 2 if phase0 else c


def pct(a: np.ndarray, q: float) -> float:
    return float(np.percentile(a, q)) if len(a) else float("nan")


def kernel(csv_path: Path) -> dict:
    rows = list(csv.DictReader(csv_path.open()))
    if not rows or "bbr_bw" not in rows[0]:
        bad(str(csv_path), "no bbr_bw column (recorded before tcp_bulk.py sampled TCP_CC_INFO)")
    col = columns(str(csv_path), rows, {k: float for k in
                  ("t_s", "snd_cwnd", "pacing_rate", "bbr_bw", "bbr_min_rtt", "bbr_pacing_gain", "bbr_cwnd_gain",
                   "unacked")})
    t, g, cg = col["t_s"], col["bbr_pacing_gain"], col["bbr_cwnd_gain"]
    bw = col["bbr_bw"] / MSS  # packets/s
    probe_rtt = (g == 256) & (cg == 256)
    starts = np.flatnonzero(probe_rtt[1:] & ~probe_rtt[:-1]) + 1
    starts = starts[t[starts] > 1.0]  # not the first sample (gains 1, 1 before any ACK)
    # PROBE_BW only: from FROM_S on, without PROBE_RTT and the 200 ms after it (the window refills).
    near = np.zeros(len(t), bool)
    for i in np.flatnonzero(probe_rtt):
        near |= (t >= t[i]) & (t <= t[i] + 0.2)
    pb = (t >= FROM_S) & (cg == 512) & ~near
    if not pb.any():
        bad(str(csv_path), f"no PROBE_BW sample from {FROM_S:g} s on (pacing gain 1.25/0.75/1, cwnd gain 2)")
    min_rtt_s = col["bbr_min_rtt"] / 1e6
    target = np.array([budget(int(np.ceil(2 * b * m)), gg == 320) for b, m, gg in zip(bw, min_rtt_s, g)])
    out = {
        "bw_ratio_med": pct(bw[pb] / LINK_PPS, 50), "bw_ratio_p90": pct(bw[pb] / LINK_PPS, 90),
        "bw_ratio_max": float(np.max(bw[pb] / LINK_PPS)),
        "gain_1.25_share": float(np.mean(g[pb] == 320)), "gain_0.75_share": float(np.mean(g[pb] == 192)),
        "min_rtt_ms": f"{np.min(min_rtt_s[pb]) * 1e3:.1f}-{np.max(min_rtt_s[pb]) * 1e3:.1f}",
        "probe_rtt_visits": len(starts), "probe_rtt_at_s": " ".join(f"{t[i]:.1f}" for i in starts),
        "cwnd_med": pct(col["snd_cwnd"][pb], 50), "target_no_aggr_med": pct(target[pb], 50),
        "cwnd_over_target_med": pct(col["snd_cwnd"][pb] - target[pb], 50),
        "cwnd_over_target_p90": pct(col["snd_cwnd"][pb] - target[pb], 90),
        "unacked_med": pct(col["unacked"][pb], 50),
        "pacing_over_model_med": pct(col["pacing_rate"][pb] / (col["bbr_bw"][pb] * g[pb] / 256), 50),
        "_pb_windows": [(a, b) for a, b in _spans(t, pb)],
        "_cruise": _spans(t, pb & (g == 256)),
        "_probe_rtt_exits": t[np.flatnonzero(probe_rtt[:-1] & ~probe_rtt[1:]) + 1],
    }
    return out


def _spans(t: np.ndarray, mask: np.ndarray) -> list[tuple[float, float]]:
    spans, start = [], None
    for ti, m in zip(t, mask):
        if m and start is None:
            start = ti
        elif not m and start is not None:
            spans.append((start, ti))
            start = None
    if start is not None:
        spans.append((start, t[-1]))
    return spans


RAMP = [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10.5)]


def ramp(dep_s: np.ndarray, delay: np.ndarray, exits: np.ndarray) -> dict:
    """Mean queueing delay by time since the last PROBE_RTT ended (the queue's climb between visits)."""
    out = {}
    if not len(exits):
        return out
    j = np.searchsorted(exits, dep_s, side="right") - 1
    since = np.where(j >= 0, dep_s - exits[np.clip(j, 0, None)], -1.0)
    for a, b in RAMP:
        m = (j >= 0) & (since >= a) & (since < b)
        out[f"qdelay_{a:g}-{b:g}s_after_probe_rtt_ms"] = float(np.mean(delay[m])) if m.any() else float("nan")
    return out


def in_spans(x: np.ndarray, spans: list[tuple[float, float]]) -> np.ndarray:
    m = np.zeros(len(x), bool)
    for a, b in spans:
        m |= (x >= a) & (x < b)
    return m


def uplink(log: Path) -> tuple[np.ndarray, np.ndarray]:
    """Departure times (ms since the first data packet's arrival) and queueing delays of the 1504-byte packets."""
    first, dep, delay = None, [], []
    with log.open() as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#"):
                continue
            p = line.split()
            if len(p) >= 3 and p[2] == str(WIRE):
                if p[1] == "d":
                    bad(str(log), "drops: this analysis assumes a lossless run")
                try:
                    if p[1] == "+" and first is None:
                        first = int(p[0])
                    elif p[1] == "-" and first is not None:
                        dep.append(int(p[0]) - first)
                        delay.append(int(p[3]))
                except (IndexError, ValueError):
                    bad(f"{log}:{n}", "not a Mahimahi log line (time, +/-/d, bytes, and a delay on a departure)")
    if first is None:
        bad(str(log), f"no {WIRE}-byte arrival")
    return np.array(dep, float), np.array(delay, float)


def tracefs(path: Path) -> dict:
    """ACK times (s), delivered packets and flight at each ACK, cwnd; data transmission times (s)."""
    acks, xmits = [], []
    with path.open() as f:
        for line in f:
            m = PROBE.search(line)
            if m:
                acks.append((float(m[1]), int(m[2], 16), int(m[3], 16), int(m[4])))
                continue
            m = XMIT.search(line)
            if m and int(m[2]) == MSS:
                xmits.append(float(m[1]))
    if not acks or not xmits:
        bad(str(path), "no tcp_probe or data net_dev_start_xmit events")
    a = np.array(acks, dtype=object)
    t = a[:, 0].astype(float)
    nxt, una = a[:, 1].astype(np.int64), a[:, 2].astype(np.int64)
    # tcp_rcv_established fires tcp_probe before tcp_ack: each event holds the state before its ACK, so
    # what an ACK delivered shows in the next event's snd_una.
    delivered = ((una[1:] - una[0]) % (1 << 32)) / MSS
    flight = ((nxt - una) % (1 << 32))[:-1] / MSS
    return {"t": t[:-1], "delivered": delivered, "flight": flight, "cwnd": a[:-1, 3].astype(float),
            "xmit": np.array(xmits)}


def ack_timing(tr: dict, dep_ms: np.ndarray, spans_s: list[tuple[float, float]]) -> dict:
    """ACK gaps at the sender, and each ACK's arrival against its packet's departure from the link."""
    x0 = tr["xmit"][0]  # the first data packet: the uplink log's first arrival (same ms)
    t = tr["t"] - x0
    keep = in_spans(t, spans_s)
    gaps = _gaps(np.diff(t)[keep[1:]] * 1e3)
    # The ACK that brings delivered to k was sent for packet k-1 (1 ms log resolution on the departure).
    k = np.round(tr["delivered"]).astype(int)
    ok = keep & (k >= 1) & (k <= len(dep_ms))
    lag = t[ok] * 1e3 - dep_ms[k[ok] - 1]
    lag -= np.min(lag)
    # The flight before the ACK (tcp_probe's snd_nxt - snd_una) filled the cwnd.
    limited = tr["flight"] >= tr["cwnd"]
    return {
        **gaps,
        "ack_lag_p99_minus_p1_ms": pct(lag, 99) - pct(lag, 1), "ack_lag_max_ms": float(np.max(lag)),
        "cwnd_limited_acks": float(np.mean(limited[keep])),
        "flight_med": pct(tr["flight"][keep], 50),
        "rate_max_10_rounds": _rate_max(t, tr["delivered"], tr["xmit"] - x0, keep),
    }


def _gaps(gaps: np.ndarray) -> dict:
    # One opportunity per ms and an ACK per two packets: an exact ACK clock spaces them 2 ms apart.
    return {"ack_gap_p1_ms": pct(gaps, 1), "ack_gap_p50_ms": pct(gaps, 50), "ack_gap_p99_ms": pct(gaps, 99),
            "ack_gaps_off_2ms": float(np.mean(np.abs(gaps - 2.0) > 0.25))}


def _rate_max(t: np.ndarray, delivered: np.ndarray, xmit: np.ndarray, keep: np.ndarray) -> float:
    """Median over PROBE_BW of the 10-round (400-ms) running max of ACK-clock delivery rates (packets
    delivered since the ACK that preceded the newest acked packet's send, over the time since it):
    tcp_rate_gen's ack_elapsed, the interval that counts when the sender is ACK-clocked."""
    k = np.round(delivered).astype(int)
    rates = np.full(len(t), np.nan)
    for i in np.flatnonzero(keep & (k >= 1) & (k <= len(xmit))):
        sent = xmit[k[i] - 1]
        j = np.searchsorted(t, sent, side="right") - 1  # last ACK before that send
        if 0 <= j < i and t[i] > t[j]:
            rates[i] = (delivered[i] - delivered[j]) / (t[i] - t[j])
    ok = ~np.isnan(rates)
    tt, rr = t[ok], rates[ok]
    mx = [np.max(rr[(tt > x - 0.4) & (tt <= x)]) for x in tt[::50]]
    return float(np.median(mx)) / LINK_PPS if mx else float("nan")


def ccscope(path: Path) -> dict:
    if not path.is_file():
        bad(f"--ccscope {path}", "no such file")
    rows = list(csv.DictReader(path.open()))
    if not rows or "max_bw_pps" not in rows[0]:
        bad(f"--ccscope {path}", "not a bbr_state example CSV (no max_bw_pps column, or no rows)")
    col = columns(f"--ccscope {path}", rows, {"t_ns": int, "cycle_idx": int, "max_bw_pps": float, "min_rtt_us": int,
                                               "cwnd": int, "in_flight": int, "extra_acked": int})
    t_abs = col["t_ns"] / 1e9
    t = t_abs - t_abs[0]
    mode = np.array([r.get("mode") for r in rows])
    idx, bw, mr = col["cycle_idx"], col["max_bw_pps"], col["min_rtt_us"] / 1e6
    cw, fl, ex = col["cwnd"], col["in_flight"], col["extra_acked"]
    prt = mode == "probe_rtt"
    starts = np.flatnonzero(prt[1:] & ~prt[:-1]) + 1
    near = np.zeros(len(t), bool)
    for i in starts:
        near |= (t >= t[i]) & (t <= t[i] + 0.4)
    pb = (t >= FROM_S) & (mode == "probe_bw") & ~near
    if not pb.any():
        bad(f"--ccscope {path}", f"no probe_bw row from {FROM_S:g} s on")
    target = np.array([budget(int(np.ceil(2 * b * m)), i == 0) for b, m, i in zip(bw, mr, idx)])
    out = {}
    qp = path.with_name(path.name.removesuffix(".csv") + ".queue.csv")
    if qp.exists():
        q = np.loadtxt(qp, delimiter=",", skiprows=1, ndmin=2)
        dep_s, delay = q[:, 0] / 1e9, q[:, 1]
        spans = [(t_abs[0] + a, t_abs[0] + b) for a, b in _spans(t, pb)]
        out["qdelay_mean_ms"] = float(np.mean(delay[in_spans(dep_s, spans)]))
        out["qdelay_all_mean_ms"] = float(np.mean(delay))
        out.update(ramp(dep_s, delay, t_abs[np.flatnonzero(prt[:-1] & ~prt[1:]) + 1]))
    return {
        "bw_ratio_med": pct(bw[pb] / LINK_PPS, 50), "bw_ratio_p90": pct(bw[pb] / LINK_PPS, 90),
        "bw_ratio_max": float(np.max(bw[pb] / LINK_PPS)),
        "gain_1.25_share": float(np.mean(idx[pb] == 0)), "gain_0.75_share": float(np.mean(idx[pb] == 1)),
        "min_rtt_ms": f"{np.min(mr[pb]) * 1e3:.1f}-{np.max(mr[pb]) * 1e3:.1f}",
        "probe_rtt_visits": len(starts), "probe_rtt_at_s": " ".join(f"{t[i]:.1f}" for i in starts),
        "cwnd_med": pct(cw[pb], 50), "target_no_aggr_med": pct(target[pb], 50),
        "cwnd_over_target_med": pct(cw[pb] - target[pb], 50), "cwnd_over_target_p90": pct(cw[pb] - target[pb], 90),
        "extra_acked_med": pct(ex[pb], 50), "flight_med": pct(fl[pb], 50),
        "cwnd_limited_acks": float(np.mean(fl[pb] >= cw[pb] - 1)),
        **_gaps(np.diff(t)[pb[1:]] * 1e3),
        **out,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dirs", type=Path, nargs="+")
    ap.add_argument("--ccscope", type=Path, action="append", default=[],
                    help="bbr_state example CSV of the same scenario (repeatable)")
    ap.add_argument("--summary", type=Path, help="write the rows here as CSV")
    args = ap.parse_args(argv)
    try:
        rows = _rows(args)
    except (ValueError, OSError, KeyError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}", file=sys.stderr)
        return 2
    keys = list(dict.fromkeys(k for r in rows for k in r))
    if args.summary:
        from ccscope.experiment import write_csv  # only here: the table itself needs no ccscope

        try:
            write_csv(args.summary, [{k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()}
                                     for r in rows], restval="")
        except (ValueError, OSError) as e:
            print(f"error: --summary {args.summary}: {str(e).splitlines()[0]}", file=sys.stderr)
            return 2
    for k in keys:
        print(f"{k:26s}" + "".join(f"{_fmt(r.get(k, '')):>22s}" for r in rows))
    return 0


def _fmt(v: object) -> str:
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def _rows(args: argparse.Namespace) -> list[dict]:
    rows = []
    for d in args.run_dirs:
        if not d.is_dir():
            bad(str(d), "not a directory")
        for p in sorted(d.iterdir()):
            m = RUN.match(p.name)
            if not m:
                continue
            k = kernel(p)
            spans, exits, cruise = k.pop("_pb_windows"), k.pop("_probe_rtt_exits"), k.pop("_cruise")
            dep, delay = uplink(p.with_suffix(".up.log"))
            row = {"source": "kernel", "run": f"{d.name}/r{m[2]}", **k}
            # Queueing delay over PROBE_BW (t_s starts when connect() returns, as the first data packet leaves).
            dm = in_spans(dep / 1e3, spans)
            row["qdelay_mean_ms"] = float(np.mean(delay[dm]))
            row["qdelay_all_mean_ms"] = float(np.mean(delay))
            row.update(ramp(dep / 1e3, delay, exits[exits > 1.0]))
            tp = p.with_suffix(".trace")
            if tp.exists():
                tr = tracefs(tp)
                row.update(ack_timing(tr, dep, spans))
                # Data packets handed to the device in the cruise phases (gain 1), per second.
                x = tr["xmit"] - tr["xmit"][0]
                dur = sum(b - a for a, b in cruise)
                row["sent_in_cruise_over_link"] = float(np.sum(in_spans(x, cruise))) / dur / LINK_PPS
            rows.append(row)
    for c in args.ccscope:
        rows.append({"source": "ccscope", "run": c.name.removesuffix(".csv"), **ccscope(c)})
    if not rows:
        bad(" ".join(map(str, args.run_dirs)), "no bbr-const12-qN-rK.csv runs")
    return rows


if __name__ == "__main__":
    sys.exit(main())
