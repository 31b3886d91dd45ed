#!/usr/bin/env bash
# Builds the blind themes offline from their sources and scores one half per language.
#
#   bash eval/blind/run.sh dev            # tune on these figures freely
#   bash eval/blind/run.sh test           # only once the constants are fixed (README.md here)
#
# Sources: $BLIND_DATA/<theme>/source (default /work/data/blind; each theme's SOURCES.md says how
# to put them back); bazi is built from ../shared/corpus/bazi (or $VIBE_TEST_CORPUS/bazi) without
# the hand-written examples/bazi/glossary.yaml. Workspace: $BLIND_WS (default a fresh temporary
# folder). A theme whose sources are missing is named and skipped; the table goes to stdout.
set -euo pipefail
half="${1:-dev}"
shift || true
themes=("$@")
[ ${#themes[@]} -eq 0 ] && themes=(shanghan chess travel-leave bazi)
root="$(cd "$(dirname "$0")/../.." && pwd)"
data="${BLIND_DATA:-/work/data/blind}"
corpus="${VIBE_TEST_CORPUS:-$root/../shared/corpus}"
ws="${BLIND_WS:-$(mktemp -d /tmp/vibe-blind.XXXXXX)}"
mkdir -p "$ws"
bin="$ws/vibe"
(cd "$root" && go build -o "$bin" ./cmd/vibe)
built=()
for t in "${themes[@]}"; do
  src="$data/$t/source"
  [ "$t" = bazi ] && src="$corpus/bazi"
  if [ ! -d "$src" ]; then
    echo "blind: $t skipped: $src does not exist (see eval/blind/$t/SOURCES.md to put it back)" >&2
    continue
  fi
  echo "blind: building $t from $src in $ws (offline)" >&2
  (cd "$ws" && "$bin" curate "$t" --from "$src" >"$t.curate.log" 2>&1) || true
  # A build that exits non-zero is reported but still scored: the figures say what a user gets.
  if ! (cd "$ws" && /usr/bin/time -f "$t build: %U s user, %S s sys, %M KB max RSS, %e s wall" \
        "$bin" build "$t" >"$t.build.log" 2>&1); then
    echo "blind: vibe build $t exited non-zero; last lines of $ws/$t.build.log:" >&2
    tail -5 "$ws/$t.build.log" >&2
  fi
  grep " build: " "$ws/$t.build.log" | tail -1 >&2
  built+=("$t")
done
[ ${#built[@]} -eq 0 ] && { echo "blind: nothing to score" >&2; exit 1; }
cd "$root" && go run ./eval/blind/cmd/blindscore -vibe "$bin" -workspace "$ws" -half "$half" "${built[@]}"
