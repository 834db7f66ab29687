#!/usr/bin/env bash
# man_install.sh - the installed man pages: fi_portals(7), portals4(7) and
# ptlrun(1) are roff under MANDIR that `man -M MANDIR NAME` finds and man
# renders without a warning at 80 columns, and the rendered
# fi_portals(7) names every FI_PORTALS_* variable the installed plug-in
# lists (man_vars.sh checks the markdown source against the same list).
#
#   test/docs/man_install.sh MANDIR
#
# make installcheck runs it (so make distcheck does too) with
# FI_PROVIDER_PATH set to the installed plug-in's directory.
set -u -o pipefail

[ $# -eq 1 ] || { sed -n '2,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }
mandir=$1
top=${srcdir:-$(dirname "$0")/../..}
. "$top/test/lib/tool_guard.sh"
if ! command -v man >/dev/null; then
	echo "SKIP: no man (man-db)"
	exit 77
fi
p4_need_tool fi_info
vars=$(p4_portals_vars) || { echo "$vars"; exit 1; }

warn=$(mktemp)
trap 'rm -f "$warn"' EXIT
failed=0
n=0
fail() { echo "FAIL: $*"; failed=1; }
# render FILE: the page as text on an 80-column terminal, with man's
# warnings (to stderr; lintian runs man so too), without hyphenation or
# justification (so names stay whole)
render() {
	LC_ALL=C.UTF-8 MANWIDTH=80 \
		man --warnings -E UTF-8 --nh --nj -l "$1" | col -b
}
for page in man7/fi_portals.7 man7/portals4.7 man1/ptlrun.1; do
	name=${page#*/}
	name=${name%.*}
	f=$mandir/$page
	if [ ! -f "$f" ]; then
		fail "$f is not installed"
		continue
	fi
	grep -q '^\.TH ' "$f" || fail "$f is not roff (no .TH)"
	found=$(man -M "$mandir" -w "$name" 2>&1)
	[ "$(readlink -f "$found")" = "$(readlink -f "$f")" ] || fail "man -M $mandir -w $name: '$found', not $f"
	text=$(render "$f" 2>"$warn") || fail "man -l $f failed"
	if [ -s "$warn" ]; then
		fail "man -l $f warns:"
		cat "$warn"
	fi
	grep -q "^ *$name - " <<<"$text" ||
		fail "$f: no NAME line '$name - ...' in the rendered page"
	[ "$name" = fi_portals ] || continue
	for v in $vars; do
		grep -q -w -- "$v" <<<"$text" ||
			fail "$f does not name $v"
		n=$((n + 1))
	done
done
[ "$failed" = 0 ] && echo "PASS: 3 pages render; fi_portals(7) names all $n variables"
exit $failed
