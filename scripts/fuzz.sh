#!/usr/bin/env bash
# Runs every Go fuzz target of the module for a while each.
#
#   scripts/fuzz.sh            # 10s each
#   scripts/fuzz.sh 300x       # 300 executions each (what make test runs)
#   scripts/fuzz.sh 10m        # the long run recorded in docs/fuzz.md
#   scripts/fuzz.sh 2m ./convert/ FuzzConvertPDF   # one package, one target
#
# A duration gives each target that much time, so on a loaded machine a
# slow parser may get a handful of executions (5 to 10 at load 20); a count
# (Nx, go test's -fuzztime form) gives every target the same work whatever
# the load, which is what make test uses (docs/ci.md, docs/fuzz.md).
# Targets are found as `func FuzzX(f *testing.F)` in *_test.go files; their
# seed corpora are testdata/fuzz/FuzzX/ next to them. A failing input is
# written there by `go test` (commit it with the fix as a regression seed).
# Each target bounds its own inputs in time and memory, so none can hang.
# Prints one line per target and exits 1 if any target failed.
set -euo pipefail
cd "$(dirname "$0")/.."

duration="${1:-10s}"
only_pkg="${2:-}"
only_target="${3:-}"
parallel="${FUZZ_PARALLEL:-2}"

fail=0
printf '%-28s %-12s %-8s %-14s %-8s %s\n' target package budget execs seconds result
while IFS= read -r file; do
	pkg="./$(dirname "$file")/"
	if [[ -n "$only_pkg" && "$pkg" != "$only_pkg" && "$pkg" != "./${only_pkg#./}" ]]; then
		continue
	fi
	for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(f \*testing\.F\)' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/'); do
		if [[ -n "$only_target" && "$target" != "$only_target" ]]; then
			continue
		fi
		log="$(mktemp)"
		start=$(date +%s)
		if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$duration" -fuzzminimizetime 5s -parallel "$parallel" "$pkg" >"$log" 2>&1; then
			result=ok
		else
			result=FAIL
			fail=1
		fi
		execs="$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | awk '{print $2}' || true)"
		printf '%-28s %-12s %-8s %-14s %-8s %s\n' "$target" "$pkg" "$duration" "${execs:-?}" "$(($(date +%s) - start))" "$result"
		if [[ "$result" == FAIL ]]; then
			sed 's/^/    /' "$log" | tail -40
		fi
		rm -f "$log"
	done
done < <(grep -rlE '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' --include='*_test.go' . | sed 's#^\./##' | sort)
exit "$fail"
