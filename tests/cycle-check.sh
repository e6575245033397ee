#!/bin/sh
# cycle-check.sh - the object files of every program the build makes call
# one way: no cycle at the level of symbols (docs/architecture.md, "The
# parts").
#
# The include rule (layout-check.sh) cannot see two .c files that call
# each other through one header, so this reads the objects themselves:
# with `nm`, each object's defined and undefined global symbols give an
# edge "a.o uses b.o" for every symbol a.o takes from b.o, resolved among
# the objects of the same program.  Any cycle in the graph of all the
# programs' edges is printed, one line per object on it with the symbols
# that make the edge:
#
#   cycle: bb/stage.o -> bb/account.o -> bb/stage.o
#     bb/stage.o uses bb/account.o: cbb_account
#     bb/account.o uses bb/stage.o: cbb_attempt cbb_stage_pick
#     (2 objects call each other: bb/account.o bb/stage.o )
#
# and the script exits 1.  A symbol two objects of one program define
# (a leftover object of a renamed source, say) is named, and the script
# exits 1 too: `make clean` and build again.
#
# Usage: cycle-check.sh [PROGRAM...], each PROGRAM "NAME=DIR DIR ..."
# (the directories whose objects, every *.o under them, link into it).
# Objects are named by their path under their directory, so an object
# two programs share is one node.  Without arguments (or with $OBJ_DIRS
# for the module alone, as before), the programs `make test-build`
# leaves:
#
#   module=build/pic build/lua5.4       conduit_bb.so: what needs no Lua,
#                                       then the Lua glue
#   conduit-bb=build/cli build/pic      the CLI's own objects, then the
#                                       shared ones
#
# The switch/lua plugin is another program of its own: add
# 'switch_lua=build/switch_lua' (after `make switch-plugin`) to check it
# too.  Run it after a build.
cd "$(dirname "$0")/.." || exit 2
if [ $# -eq 0 ]; then
	if [ -n "${OBJ_DIRS:-}" ]; then
		set -- "module=$OBJ_DIRS"
	else
		set -- "module=build/pic build/lua5.4" "conduit-bb=build/cli build/pic"
	fi
fi
list=$(mktemp) || exit 2
trap 'rm -f "$list"' EXIT
for prog in "$@"; do
	case $prog in
	*=*) ;;
	*) echo "cycle-check: '$prog' is not NAME=DIR..."; exit 2 ;;
	esac
	name=${prog%%=*}
	n=0
	for d in ${prog#*=}; do
		[ -d "$d" ] || { echo "cycle-check: $name: no directory $d: build first (make test-build)"; exit 2; }
		for p in $(cd "$d" && find . -name '*.o' | sed 's,^\./,,' | LC_ALL=C sort); do
			echo "$name $d $p" >> "$list"
			n=$((n + 1))
		done
	done
	[ "$n" -gt 0 ] || { echo "cycle-check: $name: no objects under ${prog#*=}: build first (make test-build)"; exit 2; }
done
# "D <prog> <obj> <sym>" for what an object defines, "U <prog> <obj>
# <sym>" for what it takes from elsewhere; the generated protobuf-c
# object is a leaf.
while read -r prog d o; do
	nm "$d/$o" | awk -v p="$prog" -v o="$o" '
		$1 == "U" { print "U", p, o, $2; next }
		NF == 3 && $2 ~ /^[TDBRVWG]$/ { print "D", p, o, $3 }'
done < "$list" | awk '
	$1 == "D" {
		k = $2 SUBSEP $4
		if ((k in def) && def[k] != $3) {
			print $2 ": " $4 " is defined by both " def[k] " and " $3 \
			      " (a leftover object? make clean, then build)"
			bad = 1
		}
		def[k] = $3
		next
	}
	{ use[$2 SUBSEP $3 SUBSEP $4] = 1 }
	END {
		for (k in use) {
			split(k, p, SUBSEP)
			o = p[2]; s = p[3]
			if (!((p[1] SUBSEP s) in def) || def[p[1], s] == o)
				continue
			t = def[p[1], s]
			if (!((o SUBSEP t) in edge)) {
				edge[o SUBSEP t] = s
				nout[o]++
				out[o, nout[o]] = t
			} else if (!((o SUBSEP t SUBSEP s) in said)) {
				edge[o SUBSEP t] = edge[o SUBSEP t] " " s
			}
			said[o, t, s] = 1
			node[o] = 1; node[t] = 1
		}
		# Tarjan: every strongly connected component of more than one
		# object is a knot; name one cycle through it.
		idx = 0; top = 0
		n = 0
		for (v in node) names[++n] = v
		# a stable order, so the output reads the same on every run
		for (i = 2; i <= n; i++) {
			x = names[i]
			for (j = i - 1; j >= 1 && names[j] > x; j--)
				names[j + 1] = names[j]
			names[j + 1] = x
		}
		for (i = 1; i <= n; i++)
			if (!(names[i] in index_of))
				strong(names[i])
		exit bad
	}
	function strong(v,    i, w, c, members) {
		index_of[v] = idx; low[v] = idx; idx++
		stack[++top] = v; on[v] = 1
		for (i = 1; i <= nout[v]; i++) {
			w = out[v, i]
			if (!(w in index_of)) {
				strong(w)
				if (low[w] < low[v]) low[v] = low[w]
			} else if (on[w] && index_of[w] < low[v]) {
				low[v] = index_of[w]
			}
		}
		if (low[v] != index_of[v])
			return
		c = 0; members = ""
		do {
			w = stack[top--]; on[w] = 0
			comp[w] = v; c++
			members = w " " members
		} while (w != v)
		if (c > 1) {
			bad = 1
			say(v)
			also(v, members)
			print "  (" c " objects call each other: " members ")"
		}
	}
	# The symbols of an edge, sorted: the output reads the same on every run.
	function syms(a, b,    w, m, i, j, x, r) {
		m = split(edge[a SUBSEP b], w, " ")
		for (i = 2; i <= m; i++) {
			x = w[i]
			for (j = i - 1; j >= 1 && w[j] > x; j--)
				w[j + 1] = w[j]
			w[j + 1] = x
		}
		r = w[1]
		for (i = 2; i <= m; i++)
			r = r " " w[i]
		return r
	}
	# Every other edge inside the knot: each one is on some cycle, and
	# each must go for the knot to come apart.
	function also(v, members,    m, mem, i, k, a, b, on_trail) {
		split("", on_trail)
		for (i = 1; i < ntrail; i++)
			on_trail[trail[i], trail[i + 1]] = 1
		m = split(members, mem, " ")
		for (i = 1; i <= m; i++) {
			a = mem[i]
			for (k = 1; k <= nout[a]; k++) {
				b = out[a, k]
				if (comp[b] == v && !((a SUBSEP b) in on_trail))
					print "  also " a " uses " b ": " syms(a, b)
			}
		}
	}
	# One cycle through v inside its component (a path back to v).
	function say(v,    i, line, seen) {
		split("", seen)
		ntrail = 0
		if (!walk(v, v, seen))
			return
		line = "cycle: " trail[1]
		for (i = 2; i <= ntrail; i++)
			line = line " -> " trail[i]
		print line
		for (i = 1; i < ntrail; i++)
			print "  " trail[i] " uses " trail[i + 1] ": " syms(trail[i], trail[i + 1])
	}
	function walk(v, goal, seen,    i, w) {
		trail[++ntrail] = v
		seen[v] = 1
		for (i = 1; i <= nout[v]; i++) {
			w = out[v, i]
			if (comp[w] != comp[goal])
				continue
			if (w == goal) {
				trail[++ntrail] = w
				return 1
			}
			if (!(w in seen) && walk(w, goal, seen))
				return 1
		}
		ntrail--
		return 0
	}'
