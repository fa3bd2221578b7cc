#!/bin/sh
# Record the kernel's TCP (reno, cubic, bbr) through mm-delay + mm-link for docs/performance.md
# ("Against the Linux kernel through mm-link").
# Usage, as root: record_tcp.sh MM_FRONTEND_DIR OUT_DIR USER SECONDS RUNS [CASE...]
#   MM_FRONTEND_DIR  Mahimahi's built src/frontend (mm-delay and mm-link setuid root)
#   OUT_DIR          where the CSVs, uplink logs and receiver counts go (with DOWNLINK_LOG=1 in the
#                    environment, the downlink (ACK) logs too: about 80 MB a minute, as the ACK
#                    direction's 100 opportunities per ms are each logged) (USER must be able to write)
#   USER             the unprivileged user Mahimahi runs as (it refuses root)
#   SECONDS, RUNS    length of each run, runs per case
#   CASE             CC:TRACE:PACKETS, e.g. cubic:const12:100 (TRACE is const12 or verizon-down);
#                    default: the nine cases of the comparison
# With PIN=1 in the environment, the receiver runs on CPU 0 and mm-delay, mm-link and the sender (the
# whole shell, through taskset, whose affinity its children inherit) on CPU 1.
# Each run has its own network namespace (unshare -n); the receiver listens there, on
# $MAHIMAHI_BASE's side. The downlink (ACKs) is a 1.2 Gbit/s trace: a pure delay, as ccscope's
# default ack_link. An unprivileged socket may only choose a congestion control listed in the
# (host-wide) net.ipv4.tcp_allowed_congestion_control: the script adds reno, cubic and bbr to it for
# the runs and puts the old list back at exit.
set -eu
if [ $# -lt 5 ]; then
    echo "usage: record_tcp.sh MM_FRONTEND_DIR OUT_DIR USER SECONDS RUNS [CC:TRACE:PACKETS...]" >&2
    exit 2
fi
MM=$1 OUT=$2 RUNAS=$3 SECS=$4 RUNS=$5
shift 5
bad() {
    echo "record_tcp.sh: $1: \`$2\` is not $3" >&2
    exit 2
}
case $SECS in ''|*[!0-9]*|0) bad SECONDS "$SECS" "a whole positive number of seconds" ;; esac
case $RUNS in ''|*[!0-9]*|0) bad RUNS "$RUNS" "a whole positive number" ;; esac
case ${PIN:-0} in 0|1) ;; *) bad PIN "$PIN" "0 or 1" ;; esac
for case in "$@"; do
    case $case in
        reno:const12:[1-9]*|cubic:const12:[1-9]*|bbr:const12:[1-9]*) ;;
        reno:verizon-down:[1-9]*|cubic:verizon-down:[1-9]*|bbr:verizon-down:[1-9]*) ;;
        *) bad CASE "$case" "CC:TRACE:PACKETS (reno|cubic|bbr, const12|verizon-down, packets)" ;;
    esac
    case ${case##*:} in *[!0-9]*) bad CASE "$case" "CC:TRACE:PACKETS with a whole number of packets" ;; esac
done
HERE=$(cd "$(dirname "$0")" && pwd)
BULK=$HERE/tcp_bulk.py
DELAY_MS=20
# 12 Mbit/s: one 1504-byte opportunity per ms; the ACK direction: 100 per ms.
echo 1 > "$OUT/const12.trace"
yes 1 | head -n 100 > "$OUT/fast.trace"
cp "$HERE/../../python/ccscope/data/traces/Verizon-LTE-short.down" "$OUT/verizon-down.trace"
ALLOWED=$(sysctl -n net.ipv4.tcp_allowed_congestion_control)
trap 'sysctl -q -w net.ipv4.tcp_allowed_congestion_control="$ALLOWED"' EXIT
sysctl -q -w net.ipv4.tcp_allowed_congestion_control="reno cubic bbr"
if [ $# -eq 0 ]; then
    set -- cubic:const12:100 reno:const12:100 bbr:const12:100 cubic:const12:20 reno:const12:20 \
        bbr:const12:20 cubic:verizon-down:100 reno:verizon-down:100 bbr:verizon-down:100
fi

run() {
    cc=$1 trace=$2 packets=$3 name=$4
    downlog=
    if [ "${DOWNLINK_LOG:-0}" = 1 ]; then downlog="--downlink-log='$OUT/$name.down.log'"; fi
    recvpin= linkpin=
    if [ "${PIN:-0}" = 1 ]; then recvpin="taskset -c 0" linkpin="taskset -c 1"; fi
    unshare -n sh -c "
        ip link set lo up
        sysctl -q -w net.ipv4.ip_forward=1
        $recvpin /usr/bin/python3 '$BULK' recv 9001 $((SECS + 10)) '$OUT/$name.recv' &
        $linkpin su '$RUNAS' -c \"'$MM/mm-delay' $DELAY_MS '$MM/mm-link' '$OUT/$trace.trace' '$OUT/fast.trace' \
            --uplink-queue=droptail --uplink-queue-args=packets=$packets --uplink-log='$OUT/$name.up.log' \
            $downlog \
            -- sh -c 'sleep 1; /usr/bin/python3 $BULK send \\\$MAHIMAHI_BASE 9001 $cc $SECS $OUT/$name.csv; sleep 1'\"
        wait
    "
}

for case in "$@"; do
    IFS=: read -r cc trace packets <<END
$case
END
    r=1
    while [ "$r" -le "$RUNS" ]; do
        run "$cc" "$trace" "$packets" "$cc-$trace-q$packets-r$r"
        r=$((r + 1))
    done
done
