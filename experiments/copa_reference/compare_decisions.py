"""Compare Copa's decisions, event by event, between genericCC (reference_harness.cc) and ccscope
(`copa_replay`): `python3 compare_decisions.py script.txt reference.txt ccscope.txt`.

Prints how many events agree on every field (cwnd, delta, mode, slow start, velocity, intersend time)
within a relative tolerance of 1e-9, the largest difference per field, and the first events that differ
with the script line that preceded them.
"""

import math
import sys

FIELDS = ["cwnd", "delta", "mode", "slow_start", "velocity", "intersend_ms"]
TOL = 1e-9


def rows(path):
    out = []
    with open(path) as f:
        for line in f:
            p = line.split()
            out.append((int(p[0]), p[1], [float(x) for x in p[2:8]]))
    return out


def main(script, ref_path, ours_path, show=5):
    lines = open(script).read().splitlines()
    ref, ours = rows(ref_path), rows(ours_path)
    if len(ref) != len(ours):
        sys.exit(f"error: {ref_path} has {len(ref)} lines, {ours_path} {len(ours)}: not the same script")
    worst = [0.0] * len(FIELDS)
    differing = []
    for r, o in zip(ref, ours):
        if r[0] != o[0] or r[1] != o[1]:
            sys.exit(f"error: line {r[0]} {r[1]!r} of {ref_path} against line {o[0]} {o[1]!r} of {ours_path}")
        bad = []
        for k, (a, b) in enumerate(zip(r[2], o[2])):
            # A NaN or infinity on either side is a difference, never an agreement.
            rel = abs(a - b) / max(abs(a), 1.0) if math.isfinite(a) and math.isfinite(b) else math.inf
            worst[k] = max(worst[k], rel)
            if not rel <= TOL:
                bad.append(k)
        if bad:
            differing.append((r, o, bad))
    print(f"{len(ref)} events compared, {len(ref) - len(differing)} agree on every field "
          f"(relative tolerance {TOL:g})")
    print("largest relative difference: " + ", ".join(f"{n} {w:.3g}" for n, w in zip(FIELDS, worst)))
    for k, name in enumerate(FIELDS):
        first = next((d for d in differing if k in d[2]), None)
        if first:
            r, o, _ = first
            n = sum(1 for d in differing if k in d[2])
            print(f"{name}: {n} events differ, first after script line {r[0]} ({lines[r[0] - 1]}): "
                  f"genericCC {r[2][k]!r}, ccscope {o[2][k]!r}")
    for r, o, bad in differing[:show]:
        print(f"script line {r[0]} ({lines[r[0] - 1]}):")
        for k in bad:
            print(f"  {FIELDS[k]}: genericCC {r[2][k]!r}, ccscope {o[2][k]!r}")
    return 0 if not differing else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
