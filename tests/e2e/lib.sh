# lib.sh - shared by the end-to-end scripts (sourced, not run).
#
# A single-node Slurm 24.11 (Debian 13 packages) runs in a chroot on this
# machine, on 127.0.0.1 only, with the Conduit test server beside it.
# CBB_E2E_ROOT names the cached root filesystem.
R=${CBB_E2E_ROOT:-/var/tmp/conduit-bb-trixie}
HERE=${HERE:-$(cd "$(dirname "$0")/../.." && pwd)}
HOSTNAME_S=$(hostname -s)
E2E_SRC=/opt/conduit-bb          # the project, copied into the root
PKI=/etc/slurm/conduit-pki       # certificates, inside the root
SRV=/var/lib/conduit-test        # Conduit test server state, inside the root
JOBS=/home/alice/jobs            # where the demo and tests put job files

in_root() { chroot "$R" "$@"; }
as_user() { # as_user USER command... (a login-less shell in the root)
	u=$1
	shift
	chroot --userspec="$u:$u" "$R" env HOME="/home/$u" USER="$u" PATH=/usr/bin:/bin "$@"
}

mounted() { mountpoint -q "$1"; }
mount_root() {
	mounted "$R/proc" || { mount -t proc proc "$R/proc" && mount --make-private "$R/proc"; }
	mounted "$R/sys" || { mount -t sysfs sysfs "$R/sys" && mount --make-private "$R/sys"; }
	mounted "$R/dev" || { mount --bind /dev "$R/dev" && mount --make-private "$R/dev"; }
	mounted "$R/dev/pts" || { mount --bind /dev/pts "$R/dev/pts" && mount --make-private "$R/dev/pts"; }
	mounted "$R/run" || { mount -t tmpfs -o mode=755,size=64m tmpfs "$R/run" && mount --make-private "$R/run"; }
	mkdir -p "$R/run/lock" "$R/run/munge"
	mounted "$R/dev/shm" || { mount -t tmpfs -o mode=1777,size=64m tmpfs "$R/dev/shm" && mount --make-private "$R/dev/shm"; }
}
umount_root() {
	for p in dev/shm run dev/pts dev sys proc; do
		mounted "$R/$p" && umount "$R/$p" 2>/dev/null
		mounted "$R/$p" && umount -l "$R/$p" 2>/dev/null
	done
	return 0
}

# Processes whose root directory is the chroot.
root_pids() {
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/root" 2>/dev/null)" = "$R" ] && echo "${d#/proc/}"
	done
}

wait_for() { # wait_for SECONDS command... : poll every 0.2 s
	t=$1
	shift
	end=$(( $(date +%s) + t ))
	while ! "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}

log() { printf '%s\n' "$*" >&2; }
