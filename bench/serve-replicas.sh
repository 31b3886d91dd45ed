#!/usr/bin/env bash
# bench/serve-replicas.sh: a bounded load run of two `vibe serve` replicas on
# one PostgreSQL (not a test). It builds the demo theme into a fresh database
# on the test server, starts a fake OpenAI-compatible model
# (bench/serveload model) and two replicas with their metrics listeners, then
# keeps STREAMS conversations streaming for DURATION, every turn of a
# conversation going to the other replica (bench/serveload load). It prints
# the load result (turns, errors, p50/p90/p99), each replica's resident memory
# (peak and at the end) and its turn and error counts from /metrics, and
# fails when any turn failed. docs/operations.md (## Load) records a run.
#
#   bench/serve-replicas.sh [STREAMS [DURATION]]     (default 200 30s)
#
# PostgreSQL comes from VIBE_TEST_DATABASE_URL (.vibe/test.env; make
# test-deps writes it); the run creates a database of its own on that server
# and drops it at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
streams=${1:-200}
duration=${2:-30s}

if [ -z "${VIBE_TEST_DATABASE_URL:-}" ] && [ -f .vibe/test.env ]; then
	set -a
	. ./.vibe/test.env
	set +a
fi
if [ -z "${VIBE_TEST_DATABASE_URL:-}" ]; then
	echo "bench/serve-replicas.sh: VIBE_TEST_DATABASE_URL is not set: run make test-deps (or scripts/test-deps.sh) first" >&2
	exit 1
fi

tmp=$(mktemp -d /tmp/vibe-replicas.XXXXXX)
db="vibe_bench_replicas_$$"
# The test server's URL with the database replaced by ours.
base=${VIBE_TEST_DATABASE_URL%%\?*}
query=""
case "$VIBE_TEST_DATABASE_URL" in *\?*) query="?${VIBE_TEST_DATABASE_URL#*\?}" ;; esac
admin_url="$VIBE_TEST_DATABASE_URL"
db_url="${base%/*}/$db$query"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	psql -q "$admin_url" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "==> build vibe and bench/serveload into $tmp"
go build -o "$tmp/vibe" ./cmd/vibe
go build -o "$tmp/serveload" ./bench/serveload
psql -q "$admin_url" -c "CREATE DATABASE $db" >/dev/null

ws="$tmp/ws"
echo "==> demo workspace $ws, built into PostgreSQL database $db (offline extractor)"
mkdir -p "$ws/books" "$ws/knowledge/demo"
cp examples/demo/*.* "$ws/books/"
rm -f "$ws/books/README.md"
for f in curate.yaml tools.yaml glossary.yaml; do cp "examples/demo/theme/$f" "$ws/knowledge/demo/$f"; done
go build -o "$ws/plugins/brew-calc" ./examples/demo/plugins/brew
export DATABASE_URL="$db_url" VIBE_LLM_PROVIDER=offline
"$tmp/vibe" --workspace "$ws" --quiet build demo --metrics-file "$tmp/build.prom"
grep '^vibe_build_stage_duration_seconds' "$tmp/build.prom" | sed 's/^/    /'
unset VIBE_LLM_PROVIDER

echo "==> fake model"
"$tmp/serveload" model -addr 127.0.0.1:0 -addr-file "$tmp/model.addr" 2>"$tmp/model.log" &
pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/model.addr" ] && break; sleep 0.1; done
model="http://$(cat "$tmp/model.addr")/v1"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
targets=()
metrics=()
rpids=()
for r in 1 2; do
	port=$(free_port)
	mport=$(free_port)
	OPENAI_BASE_URL="$model" OPENAI_API_KEY=bench VIBE_SERVE_METRICS_ADDR="127.0.0.1:$mport" \
		VIBE_SERVE_REQUESTS_PER_MINUTE=100000000 VIBE_SERVE_LOG_FORMAT=json \
		"$tmp/vibe" --workspace "$ws" serve --insecure-dev --addr "127.0.0.1:$port" 2>"$tmp/replica$r.log" &
	pid=$!
	pids+=("$pid")
	rpids+=("$pid")
	targets+=("http://127.0.0.1:$port")
	metrics+=("http://127.0.0.1:$mport/metrics")
done
for t in "${targets[@]}"; do
	for _ in $(seq 100); do curl -fsS "$t/readyz" >/dev/null 2>&1 && break; sleep 0.2; done
	curl -fsS "$t/readyz" >/dev/null || { echo "replica $t not ready:"; cat "$tmp"/replica*.log; exit 1; }
done
echo "    replicas: ${targets[*]} (pids ${rpids[*]})"

echo "==> load: $streams concurrent streams for $duration, alternating replicas ($(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) before)"
set +e
"$tmp/serveload" load -targets "$(IFS=,; echo "${targets[*]}")" -streams "$streams" -duration "$duration" -skill demo | tee "$tmp/load.json"
status=${PIPESTATUS[0]}
set -e

echo "==> replicas"
for i in 0 1; do
	pid=${rpids[$i]}
	hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
	rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
	m=$(curl -fsS "${metrics[$i]}")
	turns=$(echo "$m" | awk '/^vibe_turns_total/ {s+=$2} END {print s+0}')
	errs=$(echo "$m" | awk '/^vibe_errors_total/ {s+=$2} END {print s+0}')
	lines=$(grep -c '"msg":"request"' "$tmp/replica$((i + 1)).log" || true)
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$pid/stat")
	printf '    replica %d: peak RSS %d MiB, RSS now %d MiB, CPU %s s, vibe_turns_total %s, vibe_errors_total %s, request log lines %s\n' \
		$((i + 1)) $((hwm / 1024)) $((rss / 1024)) "$cpu" "$turns" "$errs" "$lines"
done
echo "    PostgreSQL connections of the run's database at the end: $(psql -tA "$admin_url" -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$db'")"
echo "    load average after: $(cut -d' ' -f1 /proc/loadavg)"
exit "$status"
