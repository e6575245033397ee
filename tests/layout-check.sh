#!/bin/sh
# layout-check.sh - the parts of src/ depend one way (docs/architecture.md):
#
#   core    includes only core
#   bb      includes core and bb, and inside bb each layer only itself
#           and the layers below it:
#             lang    the directive language     (core)
#             names   transfer comments, StateDir file names (core)
#             wire    Conduit's API              (names; the generated
#                                                 conduit.pb-c.h)
#             state   StateDir                   (names)
#             sched   what Slurm says and is told (lang)
#             engine  the stage engine           (all of the above)
#             hooks   the Lua glue               (all of bb)
#   switch  includes core and switch
#   cli, module.c  may include any part (and cli its own headers)
#
# Every quoted #include must name a header of a part its file may use;
# prints each break as "file:line: includes X from PART" and exits 1.
# slurm/switch_lua/ (the switch/lua plugin) includes its own headers and
# Slurm's ("src/common/...", from the Slurm tree), never the module's.
# The Makefile gives each part only its own -I flags, so the compiler
# enforces the same rule; this states it where a reviewer can read it.
# Headers cannot show two files that call each other, so last it runs
# tests/cycle-check.sh: no cycle among the built objects' symbols (run
# it after a build; make check does).
cd "$(dirname "$0")/.." || exit 1
bad=0
BB_ALL="bb/lang bb/names bb/wire bb/state bb/sched bb/engine bb/hooks"
for f in src/*/*.c src/*/*.h src/bb/*/*.c src/bb/*/*.h src/*.c; do
	part=${f#src/}
	case $part in
	core/*) allowed="core" ;;
	bb/lang/*) allowed="core bb/lang" ;;
	bb/names/*) allowed="core bb/names" ;;
	bb/wire/*) allowed="core bb/names bb/wire" ;;
	bb/state/*) allowed="core bb/names bb/state" ;;
	bb/sched/*) allowed="core bb/lang bb/sched" ;;
	bb/engine/*) allowed="core bb/lang bb/names bb/wire bb/state bb/sched bb/engine" ;;
	bb/*) allowed="core $BB_ALL" ;;
	switch/*) allowed="core switch" ;;
	cli/*) allowed="core $BB_ALL switch cli" ;;
	*) allowed="core $BB_ALL switch" ;;
	esac
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		case $line in
		'#include "'*) ;;
		*) continue ;;
		esac
		h=${line#\#include \"}
		h=${h%%\"*}
		[ "$h" = conduit.pb-c.h ] && case $part in bb/wire/*) continue ;; esac
		home=
		for p in core $BB_ALL switch cli; do
			[ -f "src/$p/$h" ] && home=$p
		done
		ok=0
		for p in $allowed; do
			[ "$p" = "$home" ] && ok=1
		done
		if [ $ok = 0 ]; then
			echo "$f:$n: includes $h from ${home:-nowhere}"
			bad=1
		fi
	done < "$f"
done
for f in slurm/switch_lua/*.c slurm/switch_lua/*.h; do
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		case $line in
		'#include "'*) ;;
		*) continue ;;
		esac
		h=${line#\#include \"}
		h=${h%%\"*}
		case $h in
		*/*) # Slurm's: a path its tree has and the module's src/ has not
			if [ -e "$h" ] || [ -e "${h#../../}" ]; then
				echo "$f:$n: includes $h, not a Slurm header"
				bad=1
			fi ;;
		*) [ -f "slurm/switch_lua/$h" ] || {
				echo "$f:$n: includes $h from outside slurm/switch_lua"
				bad=1
			} ;;
		esac
	done < "$f"
done
# Nothing but the joining module and its export map at the top.
for f in src/*; do
	case $f in
	src/core | src/bb | src/switch | src/cli | src/module.c | src/conduit_bb.map) ;;
	*) echo "$f: put it in a part (src/core, src/bb, src/switch, src/cli)"; bad=1 ;;
	esac
done
# ... and nothing in bb but its layers.
for f in src/bb/*; do
	case " $BB_ALL " in
	*" ${f#src/} "*) ;;
	*) echo "$f: put it in a layer of bb ($BB_ALL)"; bad=1 ;;
	esac
done
# The switch/lua plugin is read by Slurm's reviewers: no file of it over
# 450 lines (its circles are checked where it is built, tests/e2e/switch.sh).
for f in slurm/switch_lua/*.c slurm/switch_lua/*.h; do
	n=$(wc -l < "$f")
	[ "$n" -le 450 ] || { echo "$f: $n lines: split it (at most 450)"; bad=1; }
done
sh tests/cycle-check.sh || bad=1
exit $bad
