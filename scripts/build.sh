#!/usr/bin/env bash
# build.sh OUT: go build -o OUT ./cmd/vibe, saying what it is doing. A cold
# first build compiles about 490 packages of vibe and its modules: 196 CPU
# seconds and 2.8 GB at peak (openai-go alone about 2.3 GB), measured with
# an empty GOCACHE on 27 Nov 2026, and go build prints nothing meanwhile;
# this prints a progress line every 15 s (packages compiled so far, of at
# most the total) so a newcomer can see it is not stuck. With Go's build
# cache warm it takes seconds and prints one line.
set -euo pipefail
OUT=${1:?usage: scripts/build.sh OUT}
GO=${GO:-go}
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO"

total=$("$GO" list -deps ./cmd/vibe 2>/dev/null | wc -l || echo "?")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
echo "==> go build -o $OUT ./cmd/vibe"
echo "    (the first build downloads about 86 MB of Go modules and compiles up to $total packages:"
echo "     about 3.3 CPU minutes and 2.8 GB, so 2 to 4 minutes on an idle 2-core machine and 10 or more"
echo "     on a loaded one; seconds once Go's build cache holds it)"
"$GO" build -v -o "$OUT" ./cmd/vibe >"$log" 2>&1 &
pid=$!
every=${BUILD_PROGRESS_EVERY:-15}
while kill -0 "$pid" 2>/dev/null; do
  for _ in $(seq "$every"); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
  done
  if kill -0 "$pid" 2>/dev/null; then
    n=$(grep -c -v -e '^#' -e '^go: downloading' "$log" || true)
    last=$(grep -v -e '^#' -e '^go: downloading' "$log" | tail -n 1 || true)
    echo "    ... $(( $(date +%s) - start )) s: $n of at most $total packages compiled${last:+ (last: $last)}"
  fi
done
if ! wait "$pid"; then
  # go build -v mixes the package names with the errors: show the errors.
  grep -v -x -F -f <("$GO" list -deps ./cmd/vibe 2>/dev/null) "$log" >&2 || cat "$log" >&2
  exit 1
fi
echo "    built $OUT in $(( $(date +%s) - start )) s"
