#!/bin/sh
# Writes crates/gpushare/src/gorand/cooked.rs: the 607 starting words of
# Go's math/rand source (`rngCooked` in $GOROOT/src/math/rand/rng.go, Go's
# BSD-style license). Go computes them with 7.8e12 steps of the generator
# (its gen_cooked.go), too many to redo here, so they are read from an
# installed Go. Usage: scripts/fgd-gorand-table.sh [GOROOT]
set -eu
goroot=${1:-$(go env GOROOT)}
src="$goroot/src/math/rand/rng.go"
out="$(dirname "$0")/../crates/gpushare/src/gorand/cooked.rs"
{
  echo "//! The 607 words Go's \`rngSource\` mixes into its seed (\`rngCooked\` in"
  echo "//! Go's \`src/math/rand/rng.go\`, BSD-style license, The Go Authors),"
  echo "//! written by \`scripts/fgd-gorand-table.sh\` from an installed Go."
  echo
  echo "pub(super) const COOKED: [i64; 607] = ["
  awk '/rngCooked \[rngLen\]int64/{on=1;next} on&&/^\t}/{exit} on' "$src" \
    | tr ',' '\n' | sed 's/[[:space:]]//g' | grep -v '^$' | sed 's/^/    /;s/$/,/'
  echo "];"
} > "$out"
n=$(grep -c '^    -\?[0-9]' "$out")
[ "$n" -eq 607 ] || { echo "expected 607 words, found $n" >&2; exit 1; }
echo "wrote $out ($n words)"
