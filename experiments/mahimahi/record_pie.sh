#!/bin/sh
# Record the PIE uplink logs for crates/ccscope-net/tests/data/mahimahi/ (see its README).
# Usage, as root: record_pie.sh MM_PIE_FRONTEND_DIR OUT_DIR USER
#   MM_PIE_FRONTEND_DIR  Mahimahi's built src/frontend with pie-log.patch applied (mm-link setuid root):
#                        it also logs every PIE enqueue decision, update and late dequeue clock
#   OUT_DIR              where the logs go (USER must be able to write there)
#   USER                 the unprivileged user mm-link runs as (it refuses to run as root)
# Each case runs in its own network namespace, as in record.sh.
set -eu
if [ $# -ne 3 ]; then
    echo "usage: record_pie.sh MM_PIE_FRONTEND_DIR OUT_DIR USER" >&2
    exit 2
fi
MM=$1 OUT=$2 RUNAS=$3
HERE=$(cd "$(dirname "$0")" && pwd)
TRACES=$HERE/../../python/ccscope/data/traces
LOAD=$HERE/udp_load.py

# case name, uplink trace, queue args, seconds of load, load pattern
run() {
    name=$1 trace=$2 qargs=$3 secs=$4 pattern=$5
    unshare -n sh -c "
        ip link set lo up
        sysctl -q -w net.ipv4.ip_forward=1
        python3 '$LOAD' recv $((secs + 3)) &
        su '$RUNAS' -c \"'$MM/mm-link' '$trace' '$trace' --uplink-log='$OUT/$name.log' \
            --uplink-queue=pie --uplink-queue-args=$qargs \
            -- sh -c 'sleep 1; python3 $LOAD send \\\$MAHIMAHI_BASE $secs $pattern; sleep 1'\"
        wait
    "
}

run pie-verizon "$TRACES/Verizon-LTE-short.up" packets=1000,qdelay_ref=15,max_burst=150 3 cbr:8
run pie-verizon-ref5 "$TRACES/Verizon-LTE-short.up" packets=1000,qdelay_ref=5,max_burst=50 3 cbr:8
