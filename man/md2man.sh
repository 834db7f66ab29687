#!/bin/sh
# md2man.sh - one man page (roff) from its markdown source in man/, with
# pandoc, as libfabric makes its own pages.
#
#   man/md2man.sh PANDOC VERSION IN.md OUT
#
# The page's name, section and header line come from the front matter
# libfabric's pages carry (title: name(section), tagline: ...); the footer
# is "portals VERSION". Writes OUT only if pandoc succeeds.
set -eu

[ $# -eq 4 ] || { sed -n '2,9s/^# \{0,1\}//p' "$0" >&2; exit 2; }
pandoc=$1 version=$2 in=$3 out=$4
if [ -z "$pandoc" ]; then
	echo "md2man.sh: $out cannot be made: pandoc was not found by configure" \
		"(apt-get install pandoc, then run configure again)" >&2
	exit 1
fi
# the front matter: the lines between the first two "---" lines
front() {
	sed -n '1{/^---$/!q;};2,/^---$/p' "$in" |
		sed -n "s/^$1: *//p" | head -1
}
title=$(front title)
tagline=$(front tagline)
name= section=
case $title in
*\(*\))
	name=${title%%(*}
	section=${title#*(}
	section=${section%)}
	;;
esac
case $name$section in
*[!A-Za-z0-9_.-]*|'') echo "md2man.sh: $in: bad title '$title'" >&2; exit 1 ;;
esac
# pandoc gives a table with long rows 70n of column widths; on an 80
# column terminal man leaves 71n beside the indent and tbl puts 3n between
# columns: the widths are scaled by 0.9 so the table fits (no "table
# wider than line width")
"$pandoc" -s -f markdown -t man -M "title=$name" -M "section=$section" \
	-M "header=$tagline" -M "footer=portals $version" -o "$out.tmp" "$in"
awk '
	fmt && /^[lrcn]w\(/ {
		out = ""
		while (match($0, /w\([0-9.]+n\)/)) {
			w = substr($0, RSTART + 2, RLENGTH - 4)
			out = out substr($0, 1, RSTART - 1) sprintf("w(%.1fn)", w * 0.9)
			$0 = substr($0, RSTART + RLENGTH)
		}
		$0 = out $0
	}
	{ fmt = /^tab\(.\);$/; print }' "$out.tmp" > "$out.tmp2"
rm -f "$out.tmp"
mv "$out.tmp2" "$out"
