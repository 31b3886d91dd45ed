#!/usr/bin/env bash
# bench/run.sh: runs the project's benchmarks once each, with sizes that
# measure what the targets are about, and prints a summary.
#
#   bench/run.sh [--quick] [GROUP...]      (make bench runs them all)
#
# Groups (default: all, in this order):
#   store     knowledge/sqlite and knowledge/pgvector: search p50/p99 of
#             vector, lexical and hybrid search at VIBE_BENCH_CHUNKS chunks
#             (default 100000) on the realistic (zipf) and worst-case
#             (tiny32) synthetic corpora, HNSW recall@10 against exact search,
#             PostgreSQL ingest speed against a raw COPY of the same rows
#             (VIBE_BENCH_INGEST_CHUNKS, default 20000), the cost of
#             writing with live indexes against rebuilding them, and
#             recall@5 / MRR of both stores on eval's question sets
#   search    bench/searchbench: vibe search CPU per query (hybrid and
#             lexical) against Xapian's BM25 over the same chunks and tokens,
#             in one run, on a generated theme of VIBE_SEARCH_SIZES chunks
#             (default 5000,20000,75000), start-up resident memory and ingest
#             CPU per chunk; then, with PostgreSQL, ingest CPU per chunk into
#             it at the same sizes (vibe's and the server's backends', split
#             by statement); installs python3-xapian from Debian's packages
#             when it is missing (docs/retrieval.md, Cost against BM25)
#   chunk     chunking throughput on 三命通会 (2 MB), and token counting
#             against tiktoken-go
#   convert   bench/convert.sh: token F1 and time against pdftotext/pandoc
#             per corpus file, plus BenchmarkConvertPDF
#   pdf       bench/pdf.sh: one `vibe convert` of a folder of PDFs against
#             pdftotext once per file, whole processes on both sides: CPU,
#             wall, max RSS, load (docs/convert-measurements.md, Speed)
#   extract   the offline extractor over the bazi corpus; the LLM path over
#             it against the fake server (requests, tokens per source token)
#   runtime   the runtime's own work per turn (memory and SQLite stores, the
#             demo workspace through vibe serve's wiring) and the memory of
#             idle conversations
#   qa        bench/qabench: MRR@10 / recall@1 / recall@5 of vibe search
#             (hybrid, lexical, vector) against BM25 (k1 1.2, b 0.75, in
#             the bench) and Xapian's BM25Weight at its defaults, on the
#             public reading-comprehension sets in SQuAD format found in
#             $VIBE_QA_DATA (default ../data/qa: cmrc2018_dev.json,
#             dev-v2.0.json + test-v2.0.json, xquad.en.json) and then the
#             held-out ones in $VIBE_QA_HELDOUT (default ../data/heldout/qa:
#             xquad.zh.json, DRCD_dev.json, DRCD_test.json, COVID-QA.json,
#             and XQuAD's English questions over its Chinese contexts);
#             a missing file skips its set with a note (the files are
#             never committed).
#             Where to fetch them: docs/retrieval.md. Installs
#             python3-xapian like the search group
#   replicas  bench/serve-replicas.sh: two vibe serve replicas on one
#             PostgreSQL, 200 streams for 30 s against a fake model: errors,
#             p50/p99, RSS and CPU per replica (docs/operations.md, ## Load)
#
# --quick uses 20000 chunks for the search benchmarks and 5000 for the
# ingest comparison, and sizes 2000,5000,20000 for the search group. PostgreSQL comes from .vibe/test.env (make test-deps
# writes it); without it the PostgreSQL benchmarks are skipped with a note,
# and under CI=true the run fails. The real documents come from
# ../shared/corpus. Raw output is kept in $VIBE_BENCH_OUT (default: a new
# directory under /tmp), one file per group.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

quick=""
groups=()
for a in "$@"; do
	case "$a" in
	--quick) quick=1 ;;
	store | search | chunk | convert | pdf | extract | runtime | replicas | qa) groups+=("$a") ;;
	-h | --help)
		sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "bench/run.sh: unknown group or flag '$a' (groups: store search chunk convert pdf extract runtime replicas qa; flag: --quick)" >&2
		exit 2
		;;
	esac
done
[ ${#groups[@]} -eq 0 ] && groups=(store search chunk convert pdf extract runtime replicas qa)

if [ -f .vibe/test.env ]; then
	set -a
	. ./.vibe/test.env
	set +a
fi
if [ -z "${VIBE_TEST_DATABASE_URL:-}" ]; then
	msg="VIBE_TEST_DATABASE_URL is not set (no .vibe/test.env): the PostgreSQL benchmarks are skipped; make test-deps sets one up"
	if [ "${CI:-}" = "true" ]; then
		echo "bench/run.sh: $msg" >&2
		exit 1
	fi
	echo "bench/run.sh: note: $msg" >&2
fi
if [ -n "$quick" ]; then
	export VIBE_BENCH_CHUNKS=${VIBE_BENCH_CHUNKS:-20000}
	export VIBE_BENCH_INGEST_CHUNKS=${VIBE_BENCH_INGEST_CHUNKS:-5000}
	export VIBE_SEARCH_SIZES=${VIBE_SEARCH_SIZES:-2000,5000,20000}
fi
export VIBE_SEARCH_SIZES=${VIBE_SEARCH_SIZES:-5000,20000,75000}
export VIBE_BENCH_CHUNKS=${VIBE_BENCH_CHUNKS:-100000}
export VIBE_BENCH_INGEST_CHUNKS=${VIBE_BENCH_INGEST_CHUNKS:-20000}

out=${VIBE_BENCH_OUT:-$(mktemp -d /tmp/vibe-bench.XXXXXX)}
mkdir -p "$out"
failed=()

# gobench GROUP PKG PATTERN BENCHTIME: one go test -bench run, appended to
# the group's output file and echoed.
gobench() {
	local group=$1 pkg=$2 pattern=$3 benchtime=$4 tmp
	tmp=$(mktemp)
	echo "== $group: go test -run '^\$' -bench '$pattern' -benchtime $benchtime $pkg" | tee -a "$out/$group.txt"
	go test -run '^$' -bench "$pattern" -benchtime "$benchtime" -timeout 120m -v "$pkg" >"$tmp" 2>&1
	local rc=$?
	grep -v '^=== \|^goos:\|^goarch:\|^cpu:' "$tmp" | tee -a "$out/$group.txt"
	if [ $rc -ne 0 ] || grep -q -- '--- FAIL' "$tmp"; then
		failed+=("$group:$pkg:$pattern")
	fi
	rm -f "$tmp"
}

start=$(date +%s)
for g in "${groups[@]}"; do
	: >"$out/$g.txt"
	case "$g" in
	store)
		gobench store ./knowledge/sqlite/ 'BenchmarkSearch$' 100x
		gobench store ./knowledge/pgvector/ 'BenchmarkIngestVsCopy$' 2x
		gobench store ./knowledge/pgvector/ 'BenchmarkIncrementalIngest$' 3x
		gobench store ./knowledge/pgvector/ 'BenchmarkSearch$' 100x
		gobench store ./knowledge/pgvector/ 'BenchmarkRetrievalQuality$' 1x
		;;
	qa)
		if ! /usr/bin/python3 -c 'import xapian' 2>/dev/null; then
			echo "== qa: installing python3-xapian (Debian) for the BM25 anchor" | tee -a "$out/qa.txt"
			{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-xapian; } >>"$out/qa.txt" 2>&1
		fi
		qa_data=${VIBE_QA_DATA:-$root/../data/qa}
		qa_held=${VIBE_QA_HELDOUT:-$root/../data/heldout/qa}
		qa_sets=()
		# qa_set NAME FILE...: a -set argument when every file is there.
		qa_set() {
			local name=$1 f files=""
			shift
			for f in "$@"; do
				# CTX@QS: contexts of one file, questions of another by id.
				for part in ${f/@/ }; do
					if [ ! -f "$part" ]; then
						echo "SKIP qa set $name: $part is missing (docs/retrieval.md says where to fetch it)" | tee -a "$out/qa.txt"
							return
					fi
				done
				files=${files:+$files,}$f
			done
			qa_sets+=(-set "$name=$files")
		}
		qa_set cmrc2018-dev "$qa_data/cmrc2018_dev.json"
		qa_set squad2-dev "$qa_data/dev-v2.0.json" "$qa_data/test-v2.0.json"
		qa_set xquad-en "$qa_data/xquad.en.json"
		qa_set xquad-zh "$qa_held/xquad.zh.json"
		qa_set drcd-dev "$qa_held/DRCD_dev.json"
		qa_set drcd-test "$qa_held/DRCD_test.json"
		qa_set covid-qa "$qa_held/COVID-QA.json"
		qa_set xquad-en-over-zh "$qa_held/xquad.zh.json@$qa_data/xquad.en.json"
		echo "== qa: bench/qabench ${qa_sets[*]}" | tee -a "$out/qa.txt"
		if [ ${#qa_sets[@]} -gt 0 ] && go build -o "$out/vibe" ./cmd/vibe &&
			go run ./bench/qabench -vibe "$out/vibe" -work "$out/qabench" "${qa_sets[@]}" 2>&1 | tee -a "$out/qa.txt"; then
			echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/qa.txt"
		else
			failed+=("qa bench/qabench")
		fi
		;;
	search)
		if ! /usr/bin/python3 -c 'import xapian' 2>/dev/null; then
			echo "== search: installing python3-xapian (Debian) for the BM25 anchor" | tee -a "$out/search.txt"
			{ apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-xapian; } >>"$out/search.txt" 2>&1
		fi
		echo "== search: bench/searchbench sizes $VIBE_SEARCH_SIZES" | tee -a "$out/search.txt"
		if go build -o "$out/vibe" ./cmd/vibe &&
			go run ./bench/searchbench -vibe "$out/vibe" -sizes "$VIBE_SEARCH_SIZES" -work "$out/searchbench" 2>&1 | tee -a "$out/search.txt"; then
			:
		else
			failed+=("search bench/searchbench")
		fi
		# Ingest into PostgreSQL at the same sizes (each converted once in its
		# own workspace), a new schema each: CPU a chunk of vibe and of the backends serving it, split by
		# statement (docs/retrieval.md, "PostgreSQL").
		if [ -n "${VIBE_TEST_DATABASE_URL:-}" ]; then
			echo "== search: PostgreSQL ingest, bench/searchbench -ingest-only -postgres" | tee -a "$out/search.txt"
			if ! go run ./bench/searchbench -vibe "$out/vibe" -ingest-only -postgres "$VIBE_TEST_DATABASE_URL" -sizes "$VIBE_SEARCH_SIZES" -work "$out/pgingest" 2>&1 | tee -a "$out/search.txt"; then
				failed+=("search bench/searchbench -postgres")
			fi
		fi
		;;
	chunk)
		gobench chunk ./chunk/ 'BenchmarkSplit$' 3x
		gobench chunk ./chunk/ 'BenchmarkCount$' 3x
		;;
	convert)
		echo "== convert: bench/convert.sh" | tee -a "$out/convert.txt"
		if ! bash bench/convert.sh 2>&1 | tee -a "$out/convert.txt"; then
			failed+=("convert bench/convert.sh")
		fi
		gobench convert ./convert/ 'BenchmarkConvertPDF$' 5x
		;;
	pdf)
		echo "== pdf: bench/pdf.sh" | tee -a "$out/pdf.txt"
		if ! bash bench/pdf.sh 2>&1 | tee -a "$out/pdf.txt"; then
			failed+=("pdf bench/pdf.sh")
		fi
		;;
	extract)
		gobench extract ./extract/ 'BenchmarkOfflineBazi$' 3x
		gobench extract ./extract/ 'BenchmarkLLMBazi$' 1x
		;;
	runtime)
		gobench runtime ./runtime/ 'BenchmarkTurn' 2000x
		gobench runtime ./runtime/ 'BenchmarkIdleConversation$' 1x
		gobench runtime ./cmd/vibe/ 'BenchmarkServeTurnDemo$' 1000x
		;;
	replicas)
		if [ -z "${VIBE_TEST_DATABASE_URL:-}" ]; then
			echo "SKIP replicas: no PostgreSQL (VIBE_TEST_DATABASE_URL)" | tee -a "$out/replicas.txt"
		elif ! bash bench/serve-replicas.sh 200 30s 2>&1 | tee -a "$out/replicas.txt"; then
			failed+=("replicas bench/serve-replicas.sh")
		fi
		;;
	esac
done

# Summary: every benchmark result line with its custom metrics, and the
# figures the store benchmarks log (ratios, recall, load times).
echo
echo "==================== summary ($(($(date +%s) - start)) s; raw output in $out) ===================="
for g in "${groups[@]}"; do
	echo "-- $g"
	awk '
		/^Benchmark[^ ]*[ \t]+[0-9]+[ \t]/ {
			name = $1; sub(/-[0-9]+$/, "", name)
			line = sprintf("  %-46s", name)
			for (i = 3; i < NF; i += 2) {
				if ($(i+1) == "ns/op") line = line sprintf(" %12.3f ms/op", $i / 1e6)
				else if ($(i+1) ~ /^(B|allocs)\/op$/) continue
				else line = line sprintf(" %10s %s", $i, $(i+1))
			}
			print line
		}
		/_test\.go:[0-9]+: / && /ratio|recall|speed|loaded|COPY|costs|chunks:|per source token/ {
			sub(/^[ \t]+/, ""); sub(/^[a-z_]+_test\.go:[0-9]+: /, "")
			print "    " $0
		}
		/^[ \t]+\| / { sub(/^[ \t]+/, ""); print "    " $0 }
		/^(SKIP|--- SKIP)/ || /NOT RUN/ { sub(/^[ \t]+/, ""); print "    skipped: " $0 }
	' "$out/$g.txt"
	if [ "$g" = replicas ]; then
		grep -E '"(turns|errors|turns_per_s|p50_ms|p99_ms)"|^    replica [0-9]' "$out/replicas.txt" | sed 's/^ */    /'
	fi
	if [ "$g" = pdf ]; then
		grep -E '^\||^vibe / pdftotext|^load average|^PDFs:' "$out/pdf.txt" | sed 's/^/    /'
	fi
	if [ "$g" = search ] || [ "$g" = qa ]; then
		grep -E '^\|' "$out/$g.txt" | sed 's/^/    /'
	fi
	if [ "$g" = convert ]; then
		# convertbench's per-format table: mean F1 and time against the
		# reference tool.
		awk '/^format engine +files/ { on = 1 } /^==/ || !NF { on = 0 } on { print "    " $0 }' "$out/convert.txt"
	fi
done
if [ ${#failed[@]} -gt 0 ]; then
	echo
	echo "FAILED: ${failed[*]}"
	exit 1
fi
