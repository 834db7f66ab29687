#!/usr/bin/env bash
# valgrind.sh - the functional suite under valgrind memcheck
# (docs/robustness.md): every fabtests-ext program once, both sides of
# each pair under
#   valgrind --error-exitcode=1 --leak-check=full
#            --errors-for-leak-kinds=definite
# through fabtests-ext/run.sh (FX_WRAP), with sizes and counts cut down
# so the whole run stays within a few minutes on 2 cores; then
# test/hostile/cqstall the same way. Any invalid access, use of
# uninitialised memory or definitely lost block (still there after
# fi_close / fi_fini and exit) fails the case.
#
# Skips (77) without valgrind, and in a build with --enable-sanitize
# (ASan and valgrind cannot share a process). VALGRIND_CASES lists the
# cases to run (names below). P4_TEST_BUILDDIR locates the programs;
# VALGRIND_LOGDIR keeps the logs.
set -u

skip() { echo "SKIP: $*"; exit 77; }

here=$(cd "$(dirname "$0")" && pwd)
builddir=${P4_TEST_BUILDDIR:-$(cd "$here/../.." && pwd)}
command -v valgrind >/dev/null 2>&1 ||
	skip "no valgrind (Debian package valgrind)"
probe=$builddir/fabtests-ext/fx_pingpong
[ -x "$probe" ] || skip "$probe not built (make check builds it)"
if grep -q __asan_init "$probe" 2>/dev/null; then
	skip "built with --enable-sanitize: ASan and valgrind exclude each other"
fi
if [ -z "${FI_PROVIDER_PATH:-}" ]; then
	FI_PROVIDER_PATH=$builddir/.libs
fi
export FI_PROVIDER_PATH P4_TEST_BUILDDIR=$builddir

dir=${VALGRIND_LOGDIR:-$(mktemp -d "${TMPDIR:-/tmp}/valgrind.XXXXXX")}
mkdir -p "$dir" || exit 2
keep=1
cleanup() {
	[ -z "${VALGRIND_LOGDIR:-}" ] && [ "$keep" = 0 ] && rm -rf "$dir"
}
trap cleanup EXIT

# name  clients  seconds  program and arguments (as in run.sh); both
# eager and rendezvous sizes appear, every program once
cat >"$dir/cases" <<'EOF'
pingpong        1  240  fx_pingpong -S 100000 -I 4 -v
bw_msg          1  240  fx_bw -e msg -S 4096 -I 4 -W 16 -v
unexpected      1  240  fx_unexpected -N 100 -S 70000
directed        3  240  fx_directed
peek            1  240  fx_peek
multirecv       1  240  fx_multirecv
cancel          1  240  fx_cancel
trunc           1  240  fx_trunc
cqdata          1  240  fx_cqdata
threads_auto    1  240  fx_threads -a -N 20 -t 2
selective       1  240  fx_selective
resmgmt         1  240  fx_resmgmt
rma             1  240  fx_rma
access          1  240  fx_access
trigger         1  240  fx_trigger
EOF

vg="valgrind -q --error-exitcode=1 --leak-check=full"
vg="$vg --errors-for-leak-kinds=definite --show-leak-kinds=definite"
vg="$vg --num-callers=30"
t0=$(date +%s)
rc=0
# shellcheck disable=SC2086 # the case names are words
FX_WRAP=$vg FX_CASES_FILE=$dir/cases FX_LOGDIR=$dir/fx \
	bash "$here/../../fabtests-ext/run.sh" -j 2 ${VALGRIND_CASES:-} || rc=1
if [ -z "${VALGRIND_CASES:-}" ] && [ -x "$builddir/test/hostile/cqstall" ]; then
	CQSTALL_WRAP=$vg CQSTALL_N=1200 CQSTALL_SLEEP=1 \
		CQSTALL_LOGDIR=$dir/cqstall bash "$here/cqstall.sh" || rc=1
fi
echo "valgrind.sh: $(( $(date +%s) - t0 )) s"
if [ "$rc" = 0 ]; then
	keep=0
	echo "PASS: no memcheck error, no definite leak"
else
	grep -l 'ERROR SUMMARY\|definitely lost\|Invalid\|uninitialised' \
		"$dir"/fx/*.log "$dir"/cqstall/*.log 2>/dev/null |
		while read -r f; do echo "---- $f"; head -n 60 "$f"; done
	echo "FAIL: logs in $dir"
fi
exit "$rc"
