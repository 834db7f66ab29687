# tool_guard.sh - sourced by the tests that run one of libfabric's own
# tools (Debian's libfabric-bin) against the plug-in, built or installed.
#
# p4_need_tool TOOL: exit 77 (skip) when TOOL is not installed, or when
# the plug-in in FI_PROVIDER_PATH is a sanitizer build: the
# uninstrumented tool cannot load it (the sanitizer runtime must come
# first), and the plain build's pass runs the test.

p4_need_tool() {
	local tool=$1 plugin=${FI_PROVIDER_PATH:-}/libportals-fi.so

	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: no $tool (libfabric-bin)"
		exit 77
	fi
	if [ -f "$plugin" ] && ldd "$plugin" 2>/dev/null | grep -q 'libasan'; then
		echo "SKIP: $plugin is a sanitizer build; $tool cannot load it"
		exit 77
	fi
}

# p4_portals_vars: the FI_PORTALS_* variables `fi_info -e` lists for the
# plug-in in FI_PROVIDER_PATH, sorted, one a line (the man page tests
# compare them with the pages); none: the test fails
p4_portals_vars() {
	local vars

	vars=$(fi_info -e 2>/dev/null | grep -a -o '^# FI_PORTALS_[A-Z0-9_]*' |
	       sed 's/^# //' | sort)
	if [ -z "$vars" ]; then
		echo "FAIL: fi_info -e lists no FI_PORTALS_ variable (plug-in not loaded?)"
		exit 1
	fi
	printf '%s\n' "$vars"
}
