# lib.sh - shared by the end-to-end scripts (sourced, not run).
#
# A single-node Slurm runs in a chroot on this machine, on 127.0.0.1 only,
# with the Conduit test server beside it.  CBB_E2E_SLURM chooses which
# Slurm; each has its own cached root:
#
#   24.11  Debian 13 (trixie) packages: Slurm 24.11, linked with Lua 5.1
#          root $ROOTS/conduit-bb-trixie
#   26.05  Debian forky packages: Slurm 26.05, linked with Lua 5.1
#          root $ROOTS/conduit-bb-forky
#   24.11-lua5.4
#          Slurm 24.11.5 built from Debian's copy of the upstream source
#          against Lua 5.4 (as EL9 sites run it), in a Debian 13 root
#          root $ROOTS/conduit-bb-trixie-lua54
#   26.05-switch
#          Slurm 26.05.3 built from ../shared/vendor/slurm-26.05.3.tar.xz
#          (or CBB_SLURM_TARBALL, or SLURM_SRC: a Slurm 26.05 source tree)
#          against Lua 5.4 with --enable-multiple-slurmd,
#          in a Debian 13 root, with the switch/lua plugin of slurm/switch_lua/
#          built against that tree: two slurmd on this host (nodes cbb1 and
#          cbb2), SwitchType=switch/lua; its scenario is switch.sh
#          root $ROOTS/conduit-bb-trixie-switch, ports 7817 7818 25600
#   25.05-lua5.3
#          Slurm 25.05.8 built from ../shared/vendor/slurm-25.05.8.tar.xz
#          against Lua 5.3 (as EL8 builds link it), in a Debian 13 root
#          root $ROOTS/conduit-bb-trixie-2505
#   25.11-lua5.4
#          Slurm 25.11.7 built from ../shared/vendor/slurm-25.11.7.tar.xz
#          against Lua 5.4, in a Debian 13 root
#          root $ROOTS/conduit-bb-trixie-2511
#   (the release tarballs' directory: CBB_SLURM_VENDOR, default
#   ../shared/vendor beside the project; these two run the parts that
#   tell Slurm versions apart and the 100-job wave, not faults)
#
# Other parameters (environment), each with a default from the profile:
#   CBB_E2E_ROOTS (the directory of the cached roots, default /var/tmp:
#   an empty one builds every root from nothing), CBB_E2E_ROOT, CBB_E2E_SUITE (the Debian suite), CBB_E2E_PORTS
#   ("slurmctld slurmd conduit", default "6817 6818 24600"; slurmdbd
#   takes slurmctld's port + 2; with two slurmd the second takes slurmd's
#   port + 10 and the session controller conduit's + 1), and
#   CBB_DEBIAN_MIRROR (default: the mirror of this machine's apt sources).
PROFILE=${CBB_E2E_SLURM:-24.11}
ROOTS=${CBB_E2E_ROOTS:-/var/tmp}
HERE=${HERE:-$(cd "$(dirname "$0")/../.." && pwd)}
SLURM_SOURCE=                    # a version: built from source, not packages
SLURM_TARBALL=                   # its source: a local tarball, else Debian's
SLURM_CONFIGURE=                 # more ./configure flags
SWITCH_PLUGIN=                   # 1: slurm/switch_lua/ built and installed
DEFAULT_PORTS="6817 6818 24600"
DEFAULT_PARTS="basic restarts faults workloads features wave"
# the parts whose outcome can differ between Slurm releases (hook
# arguments, job_info, slurmscriptd, restarts, accounting); faults test
# the module against the Conduit server, the same on every Slurm
VERSION_PARTS="basic restarts workloads features"
# the wave restarts slurmctld with scripts running: what Slurm loses then
# is each release's own (docs/admin.md), so every Slurm of the matrix
# runs it; 24.11 with Lua 5.4 is 24.11's Slurm again, and skips it
ALL_BUT_WAVE="basic restarts faults workloads features"
VENDOR=${CBB_SLURM_VENDOR:-$HERE/../shared/vendor}
# from_source NAME VERSION LUA [SOURCE]: a Debian 13 root named NAME with
# Slurm VERSION built from SOURCE (a tarball or a source tree; default
# Debian's copy of the upstream tarball) against Lua LUA
from_source() {
	R=${CBB_E2E_ROOT:-$ROOTS/conduit-bb-$1}
	SUITE=${CBB_E2E_SUITE:-trixie}
	BOOTSTRAP_SCRIPT=$SUITE
	SLURM_SOURCE=$2
	LUA=$3
	SLURM_TARBALL=${4:-}
	# a source tree says its own version
	if [ -f "$SLURM_TARBALL/META" ]; then
		SLURM_SOURCE=$(awk '$1 == "Version:" { print $2 }' "$SLURM_TARBALL/META")
	fi
}
case $PROFILE in
24.11)
	R=${CBB_E2E_ROOT:-$ROOTS/conduit-bb-trixie}
	SUITE=${CBB_E2E_SUITE:-trixie}
	BOOTSTRAP_SCRIPT=$SUITE
	LUA=5.1
	# and, last, the same Slurm with Conduit's own server (real.sh)
	DEFAULT_PARTS="$DEFAULT_PARTS real" ;;
26.05)
	R=${CBB_E2E_ROOT:-$ROOTS/conduit-bb-forky}
	SUITE=${CBB_E2E_SUITE:-forky}
	# this host's debootstrap has no script for forky; sid's works
	BOOTSTRAP_SCRIPT=sid
	LUA=5.1 ;;
24.11-lua5.4)
	from_source trixie-lua54 24.11.5 5.4
	DEFAULT_PARTS=$ALL_BUT_WAVE ;;
26.05-switch)
	# The source: SLURM_SRC (a Slurm 26.05 source tree), CBB_SLURM_TARBALL,
	# else ../shared/vendor/ (the project sits beside shared/)
	from_source trixie-switch 26.05.3 5.4 \
		"${SLURM_SRC:-${CBB_SLURM_TARBALL:-$VENDOR/slurm-26.05.3.tar.xz}}"
	SLURM_CONFIGURE=--enable-multiple-slurmd
	SWITCH_PLUGIN=1
	DEFAULT_PORTS="7817 7818 25600"
	DEFAULT_PARTS="switch switch_format switch_seal switch_load" ;;
25.05-lua5.3)
	from_source trixie-2505 25.05.8 5.3 "$VENDOR/slurm-25.05.8.tar.xz"
	DEFAULT_PARTS="$VERSION_PARTS wave" ;;
25.11-lua5.4)
	from_source trixie-2511 25.11.7 5.4 "$VENDOR/slurm-25.11.7.tar.xz"
	DEFAULT_PARTS="$VERSION_PARTS wave" ;;
*)
	echo "e2e: unknown CBB_E2E_SLURM=$PROFILE (24.11, 26.05, 24.11-lua5.4, 26.05-switch, 25.05-lua5.3 or 25.11-lua5.4)" >&2
	exit 2 ;;
esac
ports=${CBB_E2E_PORTS:-$DEFAULT_PORTS}
CTLD_PORT=${ports%% *}
ports=${ports#* }
SLURMD_PORT=${ports%% *}
CONDUIT_PORT=${ports#* }
DBD_PORT=$((CTLD_PORT + 2))      # slurmdbd (MariaDB has its socket only)
SLURMD2_PORT=$((SLURMD_PORT + 10)) # the second slurmd (26.05-switch)
SESSION_PORT=$((CONDUIT_PORT + 1)) # the test session controller (26.05-switch)
HOSTNAME_S=$(hostname -s)
E2E_SRC=/opt/conduit-bb          # the project, copied into the root
PKI=/etc/slurm/conduit-pki       # certificates, inside the root
SRV=/var/lib/conduit-test        # Conduit test server state, inside the root
SESSIONS=/var/lib/conduit-session # the test session controller's (26.05-switch)
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

# The Debian mirror this machine's apt uses: the first non-security URI
# of /etc/apt/sources.list.d/*.sources, else of /etc/apt/sources.list.
debian_mirror() {
	if [ -n "${CBB_DEBIAN_MIRROR:-}" ]; then
		echo "$CBB_DEBIAN_MIRROR"
		return 0
	fi
	m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }')
	[ -n "$m" ] || m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++)
		if ($i ~ /^[a-z]+:\/\// && $i !~ /security/) { print $i; exit } }' \
		/etc/apt/sources.list 2>/dev/null)
	[ -n "$m" ] || { log "e2e: no Debian mirror in this machine's apt sources; set CBB_DEBIAN_MIRROR"; return 1; }
	echo "$m"
}

# The Slurm in the root, as "24.11" (for check lines; "24.11/lua5.4" for
# one built from source against another Lua than Debian's).
slurm_label() {
	chroot "$R" /usr/sbin/slurmctld -V 2>/dev/null |
		awk -v lua="${SLURM_SOURCE:+/lua$LUA}" '{ split($2, v, "."); print v[1] "." v[2] lua }'
}

# The liblua that the running slurmctld has mapped (from /proc/PID/maps).
lua_of_slurmctld() {
	p=$(cat "$R/run/slurmctld.pid" 2>/dev/null)
	[ -n "$p" ] && grep -o "/[^ ]*liblua[^ ]*" "/proc/$p/maps" 2>/dev/null | sort -u | head -1 | sed "s|^$R||"
}
