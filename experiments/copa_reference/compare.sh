#!/usr/bin/env bash
# Differential test of ccscope's Copa against genericCC (README.md). Usage:
#   compare.sh [genericCC checkout] [trace [seconds [cubic|alone [ctcp|reliable]]]]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/../.."
gcc_dir="${1:-}"
trace="${2:-TMobile-LTE-driving.down}"
seconds="${3:-30}"
competitor="${4:-alone}"
sender="${5:-}"
# The genericCC commit the committed golden and docs/deviations.md name.
pinned=18299d6e
for tool in g++ cargo python3 git; do
  command -v "$tool" >/dev/null || { echo "error: compare.sh needs $tool on PATH" >&2; exit 2; }
done
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -z "$gcc_dir" ]; then
  git clone -q https://github.com/venkatarun95/genericCC "$work/genericCC" ||
    { echo "error: could not clone genericCC (network?); pass a checkout as the first argument" >&2; exit 2; }
  git -C "$work/genericCC" checkout -q "$pinned"
  gcc_dir="$work/genericCC"
fi
[ -f "$gcc_dir/markoviancc.cc" ] || { echo "error: $gcc_dir has no markoviancc.cc: not a genericCC checkout" >&2; exit 2; }
echo "genericCC at $(git -C "$gcc_dir" rev-parse HEAD 2>/dev/null || echo "$gcc_dir")"
g++ -O2 -std=c++14 -I "$gcc_dir" -I "$here/shim" "$here/reference_harness.cc" \
  "$gcc_dir/rtt-window.cc" "$gcc_dir/estimators.cc" "$gcc_dir/random.cc" -o "$work/reference_harness"
(cd "$root" && cargo build -q --release -p ccscope-sim --example copa_script -p ccscope-cc --example copa_replay)
"$root/target/release/examples/copa_script" "$trace" "$seconds" "$competitor" $sender > "$work/script.txt"
"$work/reference_harness" < "$work/script.txt" > "$work/genericcc.txt"
"$root/target/release/examples/copa_replay" "$work/script.txt" > "$work/ccscope.txt"
head -4 "$work/script.txt" | grep '^#'
python3 "$here/compare_decisions.py" "$work/script.txt" "$work/genericcc.txt" "$work/ccscope.txt"
