#!/usr/bin/env bash
# demo.sh BIN DIR: build the demo theme "demo" from examples/demo in a fresh
# workspace DIR, show what each stage produced, chat offline, and end with
# the check summary.
set -euo pipefail

BIN=${1:?usage: scripts/demo.sh BIN DIR}
DIR=${2:?usage: scripts/demo.sh BIN DIR}
GO=${GO:-go}
REPO=$(cd "$(dirname "$0")/.." && pwd)
case "$BIN" in /*) ;; *) BIN="$PWD/$BIN" ;; esac
case "$DIR" in /*) ;; *) DIR="$PWD/$DIR" ;; esac

echo "==> fresh workspace $DIR"
rm -rf "$DIR"
mkdir -p "$DIR/books" "$DIR/knowledge/demo"
cp "$REPO"/examples/demo/*.* "$DIR/books/"
rm -f "$DIR/books/README.md"

# The demo's curate.yaml and its own tools (examples/demo/theme/): a compute
# plugin (a brew calculator, built with Go) and a display tool with a card.
# `vibe integrate` merges the declarations in knowledge/demo/tools.yaml into
# skills/demo/tools/tools.yaml; the plugin's relative command
# (plugins/brew-calc) is resolved against the workspace.
cp "$REPO/examples/demo/theme/curate.yaml" "$DIR/knowledge/demo/curate.yaml"
cp "$REPO/examples/demo/theme/tools.yaml" "$DIR/knowledge/demo/tools.yaml"
cp "$REPO/examples/demo/theme/glossary.yaml" "$DIR/knowledge/demo/glossary.yaml"
cp "$REPO/examples/demo/theme/eval.yaml" "$DIR/knowledge/demo/eval.yaml"
echo "==> building the demo's compute plugin into $DIR/plugins/brew-calc"
(cd "$REPO" && "$GO" build -o "$DIR/plugins/brew-calc" ./examples/demo/plugins/brew)

echo "==> vibe build demo: curate, convert, ingest, extract, integrate, check (each stage announces itself; a few seconds)"
"$BIN" --workspace "$DIR" build demo

echo
echo "==> search: vibe search demo \"water temperature for green tea\" -k 3"
"$BIN" --workspace "$DIR" search demo "water temperature for green tea" -k 3

echo
echo "==> search in Chinese: vibe search demo \"醒茶\" -k 2"
"$BIN" --workspace "$DIR" search demo "醒茶" -k 2

echo
echo "==> a rebuild changes nothing: vibe build demo again; the lines it checks:"
rebuild=$("$BIN" --workspace "$DIR" build demo 2>&1)
checked=$(grep -E '^convert: [0-9]+ converted|^ingest demo: |^  unchanged: skills/demo/knowledge|^check demo: ' <<<"$rebuild" || true)
sed 's/^ */    /' <<<"$checked"
if grep -q '^convert: 0 converted, ' <<<"$checked" && grep -q '^ingest demo: 0 added, 0 updated, .* 0 texts embedded' <<<"$checked" &&
  grep -q 'unchanged: skills/demo/knowledge' <<<"$checked"; then
  echo "    ok: nothing converted, embedded or extracted again"
else
  echo "demo: the rebuild redid work it should have kept; its output:" >&2
  echo "$rebuild" >&2
  exit 1
fi

echo
echo "==> files"
(cd "$DIR" && for d in knowledge skills plugins; do if [ -d "$d" ]; then find "$d" -type f; fi; done | sort)

echo
echo "==> the compute plugin on its own: 300 ml of green tea"
echo '{"tool":"calc_brew","input":{"tea":"green","vessel_ml":300}}' | "$DIR/plugins/brew-calc"

echo
echo "==> an offline chat (no model: retrieval-only answers with citations)"
echo "    vibe chat, one question: How hot should the water be for green tea?"
echo "How hot should the water be for green tea?" | VIBE_LLM_PROVIDER=offline "$BIN" --workspace "$DIR" chat
echo
echo "Serve it: $BIN --workspace $DIR serve --insecure-dev   (then POST /api/chat or /v1/chat/completions)"

# The check summary ends the demo (the full report: vibe check demo, or
# --format json|junit|sarif|github); errors would fail make demo here.
echo
echo "==> check: vibe check demo"
"$BIN" --workspace "$DIR" check demo --output /dev/null 2>&1

# The demo's eval cases (examples/demo/theme/eval.yaml): routing, rules,
# passages and tools measured through the runtime vibe serve uses; a failed
# case fails make demo here.
echo
echo "==> eval: vibe eval demo"
VIBE_LLM_PROVIDER=offline "$BIN" --workspace "$DIR" eval demo
