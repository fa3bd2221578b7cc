#!/bin/sh
# Record Mahimahi uplink logs for crates/ccscope-net/tests/data/mahimahi/ (see its README).
# Usage, as root: record.sh MM_FRONTEND_DIR MM_CLOCK_FRONTEND_DIR OUT_DIR USER
#   MM_FRONTEND_DIR  Mahimahi's built src/frontend (mm-link setuid root, as `make install` leaves it)
#   MM_CLOCK_FRONTEND_DIR  the same with clock-log.patch applied (CoDel's case only: it also logs
#                    `t @ clock` when CoDel's dequeue read a clock later than opportunity t)
#   OUT_DIR          where the logs go (USER must be able to write there)
#   USER             the unprivileged user mm-link runs as (it refuses to run as root)
# Each case runs in its own network namespace (unshare -n), so the host's routes and iptables stay
# untouched; the receiver listens there, on $MAHIMAHI_BASE's side of the link.
set -eu
if [ $# -ne 4 ]; then
    echo "usage: record.sh MM_FRONTEND_DIR MM_CLOCK_FRONTEND_DIR OUT_DIR USER" >&2
    exit 2
fi
MM=$1 MMCLOCK=$2 OUT=$3 RUNAS=$4
HERE=$(cd "$(dirname "$0")" && pwd)
TRACES=$HERE/../../python/ccscope/data/traces
DATA=$HERE/../../crates/ccscope-net/tests/data/mahimahi
LOAD=$HERE/udp_load.py

# mm-link dir, case name, uplink trace, queue, queue args, extra mm-link option, seconds of load, load pattern
run() {
    mm=$1 name=$2 trace=$3 queue=$4 qargs=$5 extra=$6 secs=$7 pattern=$8
    unshare -n sh -c "
        ip link set lo up
        sysctl -q -w net.ipv4.ip_forward=1
        python3 '$LOAD' recv $((secs + 3)) &
        su '$RUNAS' -c \"'$mm/mm-link' $extra '$trace' '$trace' --uplink-log='$OUT/$name.log' \
            --uplink-queue=$queue ${qargs:+--uplink-queue-args=$qargs} \
            -- sh -c 'sleep 1; python3 $LOAD send \\\$MAHIMAHI_BASE $secs $pattern; sleep 1'\"
        wait
    "
}

run "$MM" droptail-verizon "$TRACES/Verizon-LTE-short.up" droptail packets=20 "" 3 cbr:8
run "$MM" drophead-verizon "$TRACES/Verizon-LTE-short.up" drophead packets=20 "" 3 cbr:8
run "$MM" infinite-synthetic "$DATA/synthetic-40ms.trace" infinite "" "" 3 onoff:8:300:200
run "$MM" once-droptail-synthetic "$DATA/synthetic-once-2s.trace" droptail packets=30 --once 3 cbr:6
run "$MMCLOCK" codel-verizon "$TRACES/Verizon-LTE-short.up" codel packets=1000,target=5,interval=100 "" 3 cbr:8
