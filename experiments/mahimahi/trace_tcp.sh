#!/bin/sh
# Run a command with the kernel's TCP tracepoints on, and keep what they wrote (for hystart_trace.py).
# Usage, as root: trace_tcp.sh OUT_FILE COMMAND [ARG...]
#   OUT_FILE  where the trace text goes (must not exist: nothing is overwritten)
#   COMMAND   e.g. `env PIN=1 sh record_tcp.sh MM OUT mmuser 10 1 cubic:const12:100`
# Turns on, in tracefs (mounted at /sys/kernel/tracing if it is not), `tcp:tcp_probe` for both ends
# of connections to port 9001 (tcp_bulk.py's): at the sender every ACK it receives (snd_una, snd_nxt,
# snd_cwnd, ssthresh, srtt), at the receiver every data packet (rcv_wnd); `net:net_dev_start_xmit`
# (each packet a stack hands to a device: the sender's data on `ingress`, the receiver's ACKs on
# mm-delay's outer device); and `tcp:tcp_rcvbuf_grow` (the receiver's dynamic right-sizing). The
# tracing buffer is global: run one at a time. The tracepoints (enabled or not, tcp_probe's filter),
# the buffer size and tracing_on are put back as they were at exit.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: trace_tcp.sh OUT_FILE COMMAND [ARG...]" >&2
    exit 2
fi
OUT=$1
shift
if [ -e "$OUT" ]; then
    echo "trace_tcp.sh: OUT_FILE: \`$OUT\` exists; choose a new file" >&2
    exit 2
fi
if [ ! -d "$(dirname -- "$OUT")" ]; then
    echo "trace_tcp.sh: OUT_FILE: \`$OUT\`: no such folder" >&2
    exit 2
fi
# TRACEFS: another tracefs root (the tests point it at a plain folder laid out like one).
T=${TRACEFS:-/sys/kernel/tracing}
[ -e "$T/trace" ] || mount -t tracefs nodev "$T"
PROBE=$T/events/tcp/tcp_probe XMIT=$T/events/net/net_dev_start_xmit GROW=$T/events/tcp/tcp_rcvbuf_grow
SIZE=$(cat "$T/buffer_size_kb") ON=$(cat "$T/tracing_on")
PROBE_ON=$(cat "$PROBE/enable") XMIT_ON=$(cat "$XMIT/enable") PROBE_FILTER=$(cat "$PROBE/filter")
[ ! -e "$GROW" ] || GROW_ON=$(cat "$GROW/enable")
restore() {
    echo 0 > "$T/tracing_on"
    echo "$PROBE_ON" > "$PROBE/enable"
    echo "$XMIT_ON" > "$XMIT/enable"
    [ ! -e "$GROW" ] || echo "$GROW_ON" > "$GROW/enable"
    # A filter file reads "none" when there is none; writing 0 clears one.
    if [ "$PROBE_FILTER" = none ]; then echo 0 > "$PROBE/filter"; else printf '%s\n' "$PROBE_FILTER" > "$PROBE/filter"; fi
    echo "$SIZE" > "$T/buffer_size_kb"
    echo "$ON" > "$T/tracing_on"
}
trap restore EXIT
echo 0 > "$T/tracing_on"
echo > "$T/trace"
echo 65536 > "$T/buffer_size_kb"
echo 'dport == 9001 || sport == 9001' > "$PROBE/filter"
echo 1 > "$PROBE/enable"
echo 1 > "$XMIT/enable"
[ ! -e "$GROW" ] || echo 1 > "$GROW/enable"
echo 1 > "$T/tracing_on"
"$@"
echo 0 > "$T/tracing_on"
cp "$T/trace" "$OUT"
echo > "$T/trace"
