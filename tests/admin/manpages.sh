#!/bin/sh
# manpages.sh - conduit-bb(1) and conduit_bb.conf(5) render with man -l
# without a warning, conduit_bb.conf(5) has an entry for every key of the
# code's key table (src/core/config.c, read from the code), conduit-bb(1)
# a synopsis line for every command main() dispatches (src/cli/check.c),
# and make install puts both pages in $(MANDIR).
set -u
cd "$(dirname "$0")/../.." || exit 2
t=$(mktemp -d /tmp/cbb-man.XXXXXX)
trap 'rm -rf "$t"' EXIT
bad=0
for p in man/conduit-bb.1 man/conduit_bb.conf.5; do
	MANWIDTH=80 man --warnings -l "$p" >"$t/$(basename "$p").txt" 2>"$t/err" ||
		{ echo "man -l $p failed"; bad=1; }
	if [ -s "$t/err" ]; then
		echo "man --warnings -l $p:"
		cat "$t/err"
		bad=1
	fi
done

# the key table: from `static const key_t_ keys[] = {` to `};`
awk '/^static const key_t_ keys\[\] = \{/ { on = 1; next }
     on && /^\};/ { exit }
     on { if (match($0, /^\t\{ "[A-Za-z]+",/)) print substr($0, RSTART + 4, RLENGTH - 6) }' \
	src/core/config.c > "$t/keys"
n=$(wc -l < "$t/keys")
[ "$n" -ge 30 ] || { echo "only $n keys read from src/core/config.c: the table moved?"; exit 1; }
while read -r k; do
	# an entry: the key at the start of a tagged paragraph, "Key=..."
	grep -Eq "^ {7}$k=" "$t/conduit_bb.conf.5.txt" ||
		{ echo "conduit_bb.conf(5) has no entry for $k"; bad=1; }
	grep -Eq "^#?$k=" conf/conduit_bb.conf.example ||
		{ echo "conduit_bb.conf.example has no $k"; bad=1; }
done < "$t/keys"

# the commands main() dispatches
sed -n '/^int main(/,/^}/p' src/cli/check.c |
	sed -n 's/.*strcmp(argv\[1\], "\([a-z]*\)").*/\1/p' | grep -v '^help$' | sort -u > "$t/cmds"
[ "$(wc -l < "$t/cmds")" -ge 3 ] || { echo "no commands read from main()"; exit 1; }
while read -r c; do
	grep -Eq "^ {7}conduit-bb +$c( |$)" "$t/conduit-bb.1.txt" ||
		{ echo "conduit-bb(1) has no synopsis for $c"; bad=1; }
done < "$t/cmds"

make --no-print-directory -s install DESTDIR="$t/root" PREFIX=/usr LUA_VERSION=5.1 >/dev/null ||
	{ echo "make install failed"; exit 1; }
for f in usr/share/man/man1/conduit-bb.1 usr/share/man/man5/conduit_bb.conf.5; do
	[ -f "$t/root/$f" ] || { echo "make install put no $f"; bad=1; }
done
echo "$n keys, $(wc -l < "$t/cmds") commands checked"
exit $bad
