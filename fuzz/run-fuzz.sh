#!/bin/sh
# run-fuzz.sh TARGET CORPUS SECONDS - a bounded libFuzzer run over a corpus.
set -e
target=$1 corpus=$2 seconds=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$corpus"/. "$work"/ 2>/dev/null || true
exec "$target" -max_total_time="$seconds" -print_final_stats=1 "$work"
