"""Copa's throughput as a share of Cubic's on the ctcp sender (genericCC's loop, Copa's default) and on
the reliable transport, in the setup of crates/ccscope-sim/tests/schemes.rs (`run_cellular`: 60 s, seed 1,
a 500-packet droptail buffer, 20 ms each way, ACKs over an uncongested 100 Mbit/s link):
`python experiments/schemes/copa_senders.py [trace dir]` (docs/deviations.md, Copa).
"""

import sys
from pathlib import Path

from ccscope import api

TRACES = ("Verizon-LTE-short.down", "Verizon-LTE-short.up", "TMobile-LTE-short.down", "TMobile-LTE-short.up",
          "TMobile-LTE-driving.down", "ATT-LTE-driving.down", "ATT-LTE-driving.up", "Verizon-EVDO-driving.down",
          "Verizon-EVDO-driving.up")


def throughput(traces: Path, trace: str, flow: str) -> float:
    text = (f'seed = 1\nduration_s = 60\n[data_link]\ntrace = "{(traces / trace).as_posix()}"\ndelay_ms = 20\n'
            'queue = { kind = "droptail", packets = 500 }\n[ack_link]\nrate_mbps = 100\ndelay_ms = 20\n'
            f'[[flows]]\n{flow}')
    return float(api.run(api.Scenario(text, None), seed=1).flow_records()[0]["throughput_mbps"])


def main() -> None:
    traces = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/traces").resolve()
    print("| trace | Copa/Cubic, ctcp sender | Copa/Cubic, reliable transport |\n|---|---:|---:|")
    for trace in TRACES:
        cubic = throughput(traces, trace, 'controller = "cubic"\n')
        ctcp = throughput(traces, trace, 'controller = "copa"\n')
        reliable = throughput(traces, trace, 'controller = "copa"\ntransport = "reliable"\n')
        print(f"| {trace} | {ctcp / cubic:.2f} | {reliable / cubic:.2f} |", flush=True)


if __name__ == "__main__":
    main()
