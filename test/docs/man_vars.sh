#!/usr/bin/env bash
# man_vars.sh - the man page documents exactly the variables the provider
# reads: every FI_PORTALS_* variable that `fi_info -e` lists for the
# plug-in just built has one entry in man/fi_portals.7.md (a line
# starting with *FI_PORTALS_...*), and no entry names a variable the
# provider does not define. Catches a variable added without docs, a
# stale entry, and an entry written twice.
#
# make check sets FI_PROVIDER_PATH (the plug-in) and srcdir.
set -u

top=${srcdir:-$(dirname "$0")/../..}
man=$top/man/fi_portals.7.md
. "$top/test/lib/tool_guard.sh"
p4_need_tool fi_info
defined=$(p4_portals_vars) || { echo "$defined"; exit 1; }
documented=$(grep -E '^\*FI_PORTALS_' "$man" |
	     grep -o 'FI_PORTALS_[A-Z0-9_]*' | sort)
failed=0
for v in $defined; do
	n=$(printf '%s\n' "$documented" | grep -c -x "$v")
	if [ "$n" -ne 1 ]; then
		echo "FAIL: $v has $n entries in $man"
		failed=1
	fi
done
for v in $(printf '%s\n' "$documented" | sort -u); do
	if ! printf '%s\n' "$defined" | grep -q -x "$v"; then
		echo "FAIL: $man documents $v, which the provider does not define"
		failed=1
	fi
done
[ "$failed" = 0 ] && echo "PASS: $(printf '%s\n' "$defined" | wc -l) variables, one entry each"
exit $failed
