#!/bin/sh
# run-fuzz.sh TARGET CORPUS SECONDS - a bounded libFuzzer run over a corpus.
#
# The checked-in CORPUS is copied to a scratch directory first, so what the
# run discovers never grows it (set FUZZ_CORPUS_OUT=DIR to keep the evolved
# corpus, e.g. to pick new seeds with -merge=1). A crash, leak, sanitizer
# report or timeout fails the run; the input that caused it is kept under
# FUZZ_ARTIFACTS (default: an "artifacts" directory next to TARGET) and the
# command to replay it is printed. SECONDS=0 skips the run.
set -eu

if [ $# -ne 3 ]; then
	echo "usage: $0 TARGET CORPUS SECONDS" >&2
	exit 2
fi
target=$1 corpus=$2 seconds=$3

if [ "$seconds" -eq 0 ] 2>/dev/null; then
	echo "run-fuzz: SECONDS=0, skipped"
	exit 0
fi
if [ ! -x "$target" ]; then
	echo "run-fuzz: $target is not built" >&2
	exit 1
fi

artifacts=${FUZZ_ARTIFACTS:-$(dirname "$target")/artifacts}
mkdir -p "$artifacts"
work=$(mktemp -d)
# No exec below: the trap must run to remove the scratch corpus.
trap 'rm -rf "$work"' EXIT
if [ -d "$corpus" ]; then
	cp -R "$corpus"/. "$work"/
fi

# UBSan reports are fatal by the build flags; make them readable too.
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export UBSAN_OPTIONS

status=0
"$target" -max_total_time="$seconds" -timeout=10 -max_len=8192 \
	-print_final_stats=1 -artifact_prefix="$artifacts/" "$work" || status=$?

if [ -n "${FUZZ_CORPUS_OUT:-}" ]; then
	mkdir -p "$FUZZ_CORPUS_OUT"
	cp -R "$work"/. "$FUZZ_CORPUS_OUT"/
fi
# Leave no empty directory behind (distcleancheck, in-tree builds).
rmdir "$artifacts" 2>/dev/null || true
if [ "$status" -ne 0 ]; then
	echo "run-fuzz: $target failed ($status); inputs kept in $artifacts/" >&2
	echo "run-fuzz: replay one with: $target $artifacts/<file>" >&2
fi
exit "$status"
