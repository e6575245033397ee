#!/bin/sh
# cycle-check.sh - the module's object files call one way: no cycle at
# the level of symbols (docs/architecture.md, "The parts").
#
# The include rule (layout-check.sh) cannot see two .c files that call
# each other through one header, so this reads the objects themselves:
# with `nm`, each object's defined and undefined global symbols give an
# edge "a.o uses b.o" for every symbol a.o takes from b.o.  Any cycle in
# that graph is printed, one line per object on it with the symbols that
# make the edge:
#
#   cycle: bb/stage.o -> bb/account.o -> bb/stage.o
#     bb/stage.o uses bb/account.o: cbb_account
#     bb/account.o uses bb/stage.o: cbb_attempt cbb_stage_pick
#     (2 objects call each other: bb/account.o bb/stage.o )
#
# and the script exits 1.  Reads the module's objects in $OBJ_DIRS
# (default build/pic build/lua5.4: what needs no Lua, then the Lua glue,
# as `make test-build` leaves them); run it after a build.
cd "$(dirname "$0")/.." || exit 2
dirs=${OBJ_DIRS:-build/pic build/lua5.4}
objs=""
for d in $dirs; do
	objs="$objs $(cd "$d" 2>/dev/null && ls core/*.o bb/*.o bb/*/*.o switch/*.o module.o 2>/dev/null |
		sed "s,^,$d/,")"
done
if [ -z "$(echo $objs)" ]; then
	echo "no objects under $dirs: build first (make test-build)"
	exit 2
fi
# "D <obj> <sym>" for what an object defines, "U <obj> <sym>" for what it
# takes from elsewhere (objects named as under src/); the generated
# protobuf-c object is a leaf.
for p in $objs; do
	o=$p
	for d in $dirs; do o=${o#"$d"/}; done
	nm "$p" | awk -v o="$o" '
		$1 == "U" { print "U", o, $2; next }
		NF == 3 && $2 ~ /^[TDBRVWG]$/ { print "D", o, $3 }'
done | awk '
	$1 == "D" { def[$3] = $2; next }
	{ use[$2 SUBSEP $3] = 1 }
	END {
		for (k in use) {
			split(k, p, SUBSEP)
			o = p[1]; s = p[2]
			if (!(s in def) || def[s] == o)
				continue
			t = def[s]
			if (!((o SUBSEP t) in edge)) {
				edge[o SUBSEP t] = s
				nout[o]++
				out[o, nout[o]] = t
			} else {
				edge[o SUBSEP t] = edge[o SUBSEP t] " " s
			}
			node[o] = 1; node[t] = 1
		}
		# Tarjan: every strongly connected component of more than one
		# object is a knot; name one cycle through it.
		idx = 0; top = 0; bad = 0
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
			print "  (" c " objects call each other: " members ")"
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
			print "  " trail[i] " uses " trail[i + 1] ": " edge[trail[i] SUBSEP trail[i + 1]]
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
