#!/usr/bin/env bash
# demo.sh BIN DIR: build the demo theme "demo" from examples/demo in a fresh
# workspace DIR and show what each stage produced.
set -euo pipefail

BIN=${1:?usage: scripts/demo.sh BIN DIR}
DIR=${2:?usage: scripts/demo.sh BIN DIR}
REPO=$(cd "$(dirname "$0")/.." && pwd)
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac

echo "==> fresh workspace $DIR"
rm -rf "$DIR"
mkdir -p "$DIR/books" "$DIR/knowledge/demo"
cp "$REPO"/examples/demo/*.* "$DIR/books/"
rm -f "$DIR/books/README.md"

# The demo's curate.yaml: green-tea.md comes before its HTML copy, so the copy
# is the one dropped as a near-duplicate; scratch.txt is dropped as junk.
cat > "$DIR/knowledge/demo/curate.yaml" <<'YAML'
# Sources of the demo theme (see examples/demo/README.md).
sources:
  - source: books/green-tea.md
    notes: the original notes
  - books/                  # everything else in the folder
quality:
  min_chars: 200
YAML

if "$BIN" build --help >/dev/null 2>&1; then
  "$BIN" --workspace "$DIR" build demo
else
  "$BIN" --workspace "$DIR" curate demo
  "$BIN" --workspace "$DIR" convert demo
fi

echo
echo "==> search: vibe search demo \"water temperature for green tea\" -k 3"
"$BIN" --workspace "$DIR" search demo "water temperature for green tea" -k 3

echo
echo "==> search in Chinese: vibe search demo \"醒茶\" -k 2"
"$BIN" --workspace "$DIR" search demo "醒茶" -k 2

echo
echo "==> a rebuild changes nothing: nothing converted, embedded or extracted again"
"$BIN" --workspace "$DIR" --quiet build demo 2>&1 | grep -E "unchanged|embedded|ids kept|check demo" || true

echo
echo "==> files"
(cd "$DIR" && for d in knowledge skills; do if [ -d "$d" ]; then find "$d" -type f; fi; done | sort)
