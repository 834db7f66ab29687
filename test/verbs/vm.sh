#!/bin/sh
# vm.sh - run a script inside a throw-away QEMU guest that has a soft-RoCE
# device, so the verbs transport can be tested on a machine without RDMA
# hardware or an RDMA-capable kernel.
#
#   test/verbs/vm.sh [-s DIR]... GUEST-SCRIPT OUTDIR [VAR=value ...]
#
# The guest boots the distribution's stock kernel (its package downloaded
# once and unpacked into P4_VM_CACHE, never installed), loads the modules
# for 9p, virtio and rdma_rxe (dependencies resolved from modules.dep),
# mounts this machine's / read-only over 9p (so build trees run where they
# are), gives itself tmpfs /tmp and /run, mounts each DIR given with -s
# read-only at its own path (the build and source trees, which that /tmp
# would hide when they live under it; any path, spaces included), puts
# 127.0.0.2/8 on a dummy netdev p4rxe and creates the soft-RoCE device
# rxe0 on it (RoCE v2 GID ::ffff:127.0.0.2), then runs GUEST-SCRIPT with
# /bin/sh from OUTDIR, which is shared read-write at /tmp/out. No network
# card: nothing leaves it. VAR=value pairs are exported to the script.
# Output: OUTDIR/log.txt (script), OUTDIR/console.txt (kernel); exit
# status = the script's, 125 if the guest did not finish.
#
# Needs root for apt-get (qemu, busybox, rdma-core userspace, the kernel
# package) on the first run. P4_VM_CPUS (default 2), P4_VM_MEM (MiB,
# 2048), P4_VM_TIMEOUT (s, 1800), P4_VM_CACHE (/var/cache/p4-verbs-vm).
set -eu

shares=
while [ $# -ge 2 ] && [ "$1" = -s ]; do
	shares="$shares$(readlink -f "$2")
"
	shift 2
done
[ $# -ge 2 ] || { sed -n '2,25s/^# \{0,1\}//p' "$0" >&2; exit 2; }
script=$(readlink -f "$1")
mkdir -p "$2"
out=$(readlink -f "$2")
shift 2
cache=${P4_VM_CACHE:-/var/cache/p4-verbs-vm}
mkdir -p "$cache"

# ---- host packages ---------------------------------------------------------
missing=
have() { command -v "$1" >/dev/null 2>&1; }
have qemu-system-x86_64 || missing="$missing qemu-system-x86"
have busybox || missing="$missing busybox-static"
have rdma || missing="$missing iproute2"
have cpio || missing="$missing cpio"
ls /usr/lib/*/libibverbs/librxe-*.so >/dev/null 2>&1 ||
	missing="$missing rdma-core ibverbs-providers"
have ibv_devinfo || missing="$missing ibverbs-utils"
if [ -n "$missing" ]; then
	echo "vm.sh: installing$missing" >&2
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null
fi

# ---- kernel: the package linux-image-amd64 points at, unpacked ---------------
if [ ! -d "$cache/root/boot" ]; then
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	       sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1)
	[ -n "$kpkg" ] || { echo "vm.sh: no kernel package found" >&2; exit 125; }
	echo "vm.sh: downloading $kpkg" >&2
	tmp=$(mktemp -d "$cache/dl.XXXXXX")
	(cd "$tmp" && apt-get download -qq "$kpkg" >/dev/null &&
	 dpkg-deb -x ./*.deb root)
	rm -rf "$cache/root"
	mv "$tmp/root" "$cache/root"
	rm -rf "$tmp"
fi
vmlinuz=$(ls "$cache"/root/boot/vmlinuz-* | head -1)
kver=${vmlinuz##*/vmlinuz-}
moddir=$cache/root/lib/modules/$kver

# ---- initramfs: busybox, modules in dependency order, init ---------------------
# (named after this script's checksum: a changed recipe builds anew)
initrd=$cache/initrd-$kver-p4-$(cksum < "$0" | cut -d' ' -f1).gz
if [ ! -s "$initrd" ]; then
	work=$(mktemp -d)
	mkdir -p "$work/bin" "$work/mods" "$work/newroot" "$work/proc" \
		 "$work/sys" "$work/dev"
	cp "$(command -v busybox)" "$work/bin/busybox"
	for a in sh mount mkdir insmod chroot poweroff echo; do
		ln -s busybox "$work/bin/$a"
	done
	# depth-first over each module's modinfo "depends=": a module after
	# everything it needs (the unpacked package has no modules.dep)
	order=$work/order
	: > "$order"
	add_mod() {
		local path cat_ko deps dep alt
		alt=$(echo "$1" | tr _ -)
		path=$(cd "$moddir" && find kernel \( -name "$1.ko" -o \
		       -name "$1.ko.*" -o -name "$alt.ko" -o \
		       -name "$alt.ko.*" \) | head -1)
		[ -n "$path" ] || return 0	# built in
		grep -qx "$path" "$order" && return 0
		case $path in
		*.xz) cat_ko="xz -dc" ;;
		*.zst) cat_ko="zstd -qdc" ;;
		*) cat_ko=cat ;;
		esac
		deps=$($cat_ko "$moddir/$path" | tr '\0' '\n' |
		       sed -n 's/^depends=//p' | head -1 | tr ',' ' ')
		for dep in $deps; do
			add_mod "$dep"
		done
		echo "$path" >> "$order"
	}
	# rdma_rxe asks the crypto API for crc32 at run time (no modprobe
	# here): load the generic one up front
	for m in virtio_pci 9pnet_virtio 9p dummy crc32_generic rdma_rxe \
		 ib_uverbs; do
		add_mod "$m"
	done
	n=100
	while read -r path; do
		name=${path##*/}
		case $path in
		*.xz) xz -dc "$moddir/$path" > "$work/mods/$n-${name%.xz}" ;;
		*.zst) zstd -qdc "$moddir/$path" > "$work/mods/$n-${name%.zst}" ;;
		*) cp "$moddir/$path" "$work/mods/$n-$name" ;;
		esac
		n=$((n + 1))
	done < "$order"
	cat > "$work/init" <<'EOF'
#!/bin/sh
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in /mods/*.ko; do insmod "$m" || echo "p4-vm: insmod $m failed"; done
opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o "$opts,ro" p4host /newroot
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/dev/shm
mount -t tmpfs tmpfs /newroot/tmp
mount -t tmpfs tmpfs /newroot/run
# the -s directories, listed as "TAG PATH" lines in OUTDIR/shares
mkdir -p /out
mount -t 9p -o "$opts" p4out /out
while read -r tag dir; do
	mkdir -p "/newroot$dir" &&
	mount -t 9p -o "$opts,ro" "$tag" "/newroot$dir" ||
	echo "p4-vm: cannot mount $dir"
done < /out/shares
mkdir -p /newroot/tmp/out
mount -o bind /out /newroot/tmp/out
chroot /newroot /bin/sh -c '
	hostname p4-verbs-vm	# Open MPI refuses the kernel default "(none)"
	ip link set lo up
	ip link add p4rxe type dummy
	ip addr add 127.0.0.2/8 dev p4rxe
	ip link set p4rxe up
	rdma link add rxe0 type rxe netdev p4rxe
	cd /tmp/out && /bin/sh ./job.sh > log.txt 2>&1
	echo $? > rc'
poweroff -f
EOF
	chmod 755 "$work/init"
	(cd "$work" && find . | cpio -H newc -o 2>/dev/null | gzip -1) > "$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$work"
fi

# ---- the job: the exported variables, then the script --------------------------
{
	echo '#!/bin/sh'
	for kv in "$@"; do
		printf 'export %s\n' "$(printf '%s' "$kv" | sed "s/=/='/;s/\$/'/")"
	done
	cat "$script"
} > "$out/job.sh"
rm -f "$out/rc" "$out/log.txt"

# ---- the -s directories: one 9p export each, none for a directory inside
# another (seen through that one); QEMU's option syntax doubles commas
shares=$(printf '%s' "$shares" | sort -u)
: > "$out/shares"
n=0
while IFS= read -r d; do
	[ -n "$d" ] || continue
	inner=no
	while IFS= read -r o; do
		[ -n "$o" ] || continue
		case $d in "$o"/*) inner=yes ;; esac
	done <<SHARES
$shares
SHARES
	[ "$inner" = no ] || continue
	printf 'p4s%d %s\n' "$n" "$d" >> "$out/shares"
	n=$((n + 1))
done <<SHARES
$shares
SHARES
set --
while read -r tag dir; do
	set -- "$@" -virtfs "local,path=$(printf '%s' "$dir" | sed 's/,/,,/g'),mount_tag=$tag,security_model=none,readonly=on,multidevs=remap"
done < "$out/shares"

timeout "${P4_VM_TIMEOUT:-1800}" qemu-system-x86_64 \
	-m "${P4_VM_MEM:-2048}" -smp "${P4_VM_CPUS:-2}" \
	-nographic -no-reboot -nic none \
	-kernel "$vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 quiet panic=-1" \
	-virtfs local,path=/,mount_tag=p4host,security_model=none,readonly=on,multidevs=remap \
	-virtfs local,path="$out",mount_tag=p4out,security_model=none \
	"$@" \
	> "$out/console.txt" 2>&1 || true

[ -f "$out/log.txt" ] && cat "$out/log.txt"
if [ ! -s "$out/rc" ]; then
	echo "vm.sh: the guest did not finish; see $out/console.txt" >&2
	exit 125
fi
exit "$(cat "$out/rc")"
