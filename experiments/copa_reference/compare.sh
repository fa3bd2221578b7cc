#!/usr/bin/env bash
# Differential test of ccscope's Copa against genericCC (README.md). Usage:
#   compare.sh [genericCC checkout] [trace [seconds [cubic]]]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
gcc_dir="${1:-}"
trace="${2:-TMobile-LTE-driving.down}"
seconds="${3:-30}"
competitor="${4:-}"
work="$(mktemp -d)"
if [ -z "$gcc_dir" ]; then
  git clone -q https://github.com/venkatarun95/genericCC "$work/genericCC"
  gcc_dir="$work/genericCC"
fi
echo "genericCC at $(git -C "$gcc_dir" rev-parse HEAD 2>/dev/null || echo "$gcc_dir")"
g++ -O2 -std=c++14 -I "$gcc_dir" -I "$here/shim" "$here/reference_harness.cc" \
  "$gcc_dir/rtt-window.cc" "$gcc_dir/estimators.cc" "$gcc_dir/random.cc" -o "$work/reference_harness"
(cd "$root" && cargo build -q --release -p ccscope-sim --example copa_script -p ccscope-cc --example copa_replay)
"$root/target/release/examples/copa_script" "$trace" "$seconds" $competitor > "$work/script.txt"
"$work/reference_harness" < "$work/script.txt" > "$work/genericcc.txt"
"$root/target/release/examples/copa_replay" "$work/script.txt" > "$work/ccscope.txt"
head -4 "$work/script.txt" | grep '^#'
python3 "$here/compare.py" "$work/script.txt" "$work/genericcc.txt" "$work/ccscope.txt"
