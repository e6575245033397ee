#!/bin/sh
# seed-examples.sh CONDUIT_BB OUTDIR [SEEDS_DIR]
# Pull the example job scripts out of the product description
# (../shared/seeds/000_*.txt, beside the project) and check that
# `conduit-bb check` plans exactly the transfers it describes
# (tests/data/seed-examples/example-N.expected).  Exits 77 (skip) when the
# description is not beside the project.
set -u
cli=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
seeds=${3:-$here/../shared/seeds}
doc=$(ls "$seeds"/000_*.txt 2>/dev/null | head -n 1)
if [ -z "$doc" ]; then
	echo "skip: no product description under $seeds"
	exit 77
fi
mkdir -p "$out"
# Each example starts at "#!/bin/sh" and ends at the first empty line after
# its first command.
awk -v out="$out" '
	/^#!\/bin\/sh$/ { n++; f = out "/example-" n ".sh"; inside = 1; cmd = 0 }
	inside {
		if ($0 == "" && cmd) { inside = 0; close(f); next }
		print > f
		if ($0 != "" && $0 !~ /^#/) cmd = 1
	}' "$doc"
count=$(ls "$out"/example-*.sh 2>/dev/null | wc -l)
[ "$count" -ge 3 ] || { echo "found $count examples in $doc, expected 3"; exit 1; }
rc=0
for s in "$out"/example-*.sh; do
	name=$(basename "$s" .sh)
	want=$here/tests/data/seed-examples/$name.expected
	(cd "$out" && "$cli" check "$(basename "$s")" --job-id 10 --user testuser \
		--workdir /home/testuser) > "$out/$name.out" 2>&1 || { cat "$out/$name.out"; rc=1; }
	diff -u "$want" "$out/$name.out" || rc=1
done
exit $rc
