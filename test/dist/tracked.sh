#!/bin/sh
# tracked.sh - every file git tracks in the source tree is in the release
# tarball, but for the few below that have no place in it. make dist runs
# it on the tree it is about to pack (dist-hook), so a file added to git
# and forgotten in EXTRA_DIST fails make dist and make distcheck. Outside
# a git checkout (a build from the tarball) there is nothing to compare.
#
#   test/dist/tracked.sh SRCDIR DISTDIR
set -eu

[ $# -eq 2 ] || { sed -n '2,8s/^# \{0,1\}//p' "$0" >&2; exit 2; }
src=$1 dist=$2
top=$(git -C "$src" rev-parse --show-toplevel 2>/dev/null) || top=
if [ -z "$top" ] ||
	[ "$(cd "$top" && pwd -P)" != "$(cd "$src" && pwd -P)" ]; then
	echo "tracked.sh: $src is not a git checkout: nothing to compare"
	exit 0
fi
# Not shipped:
#   .gitignore  git's own
#   .ci/        this repository's CI entry point
ignore='^(\.gitignore|\.ci/.*)$'
list=$(mktemp)
trap 'rm -f "$list"' EXIT
git -C "$src" -c core.quotePath=false ls-files | grep -Ev "$ignore" > "$list"
total=0
missing=0
while IFS= read -r f; do
	[ -e "$src/$f" ] || continue	# deleted, not committed yet
	total=$((total + 1))
	if [ ! -e "$dist/$f" ]; then
		[ $missing -gt 0 ] || echo "tracked.sh: tracked but not in" \
			"the tarball (add to EXTRA_DIST, or to the list in $0):" >&2
		echo "  $f" >&2
		missing=$((missing + 1))
	fi
done < "$list"
[ $missing -eq 0 ] || exit 1
echo "tracked.sh: all $total tracked files are in the tarball"
