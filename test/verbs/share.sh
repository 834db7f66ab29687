#!/bin/sh
# share.sh - the soft-RoCE guest of vm.sh sees a directory under /tmp,
# with a space in its name, at the same path: a build tree there (a clone
# under /tmp) runs in the guest although the guest has a /tmp of its own.
#
#   test/verbs/share.sh BUILDDIR [OUTDIR]
#
# Copies the plug-in built in BUILDDIR into a fresh "/tmp/p4 share.XXXXXX",
# boots the guest with that directory shared (vm.sh -s) and checks there
# that `fi_info -p portals` loads the copy from that path and lists the
# soft-RoCE device rxe0. One guest boot (~1 min without KVM). Exit status:
# 0 pass, 1 fail, 125 the guest did not start (as vm.sh).
set -eu

[ $# -ge 1 ] || { sed -n '2,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
plugin=$1/.libs/libportals-fi.so
out=${2:-$1/verbs-share-out}
[ -f "$plugin" ] || { echo "share.sh: no $plugin" >&2; exit 1; }

dir=$(mktemp -d "/tmp/p4 share.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/lib"
cp "$plugin" "$dir/lib/"
cat > "$dir/guest.sh" <<'EOF'
# (run by vm.sh in the guest, P4_SHARE exported)
set -u
echo "P4_SHARE=$P4_SHARE"
ls -l "$P4_SHARE/lib" || exit 1
FI_PROVIDER_PATH="$P4_SHARE/lib" FI_PORTALS_TRANSPORT=verbs \
	fi_info -p portals > fi_info.txt 2>&1
rc=$?
cat fi_info.txt
[ $rc = 0 ] && grep -q '^ *domain: rxe0$' fi_info.txt || exit 1
echo "RESULT PASS share"
EOF
rc=0
sh "$here/vm.sh" -s "$dir" "$dir/guest.sh" "$out" "P4_SHARE=$dir" \
	> /dev/null 2>&1 || rc=$?
if [ "$rc" = 0 ] && grep -q '^RESULT PASS share$' "$out/log.txt"; then
	echo "PASS: the guest ran the plug-in from '$dir'"
	exit 0
fi
[ -f "$out/log.txt" ] && tail -20 "$out/log.txt"
[ "$rc" = 125 ] && { echo "share.sh: the guest did not start" >&2; exit 125; }
echo "FAIL: the guest did not see '$dir' (rc $rc, $out)" >&2
exit 1
