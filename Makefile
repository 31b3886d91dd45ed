# vibe: see README.md. `make demo` builds the demo theme; `make test` runs every test.
GO      ?= go
BIN     := bin/vibe
DEMO    := demo
PKGS    := ./...

.PHONY: all build install fuzz test test-short test-deps vet fmt-check tidy-check corpus-check demo clean bench

all: build

# scripts/build.sh runs go build -o $(BIN) ./cmd/vibe and prints progress
# while a cold first build compiles (minutes; seconds once cached).
build:
	@GO=$(GO) bash scripts/build.sh $(BIN)

# Installs vibe into $(go env GOBIN), or $(go env GOPATH)/bin.
install:
	$(GO) install ./cmd/vibe

# Installs and starts what the tests need (poppler-utils, pandoc, PostgreSQL
# with pgvector) when it can, and writes the connection to .vibe/test.env.
test-deps:
	bash scripts/test-deps.sh

vet:
	$(GO) vet $(PKGS)

# Fails when go.mod/go.sum are not what `go mod tidy` makes them (a direct
# dependency marked // indirect, a stale requirement, a missing sum).
tidy-check:
	$(GO) mod tidy
	git diff --exit-code go.mod go.sum

# The corpus tests (internal/testcorpus) skip without ../shared/corpus (or
# $$VIBE_TEST_CORPUS), and go test hides a passing package's output: say it
# here, once, loudly. Under CI=true those tests fail instead.
corpus-check:
	@c="$${VIBE_TEST_CORPUS:-../shared/corpus}"; if [ ! -d "$$c" ]; then \
	  echo "################################################################################"; \
	  echo "# CORPUS TESTS SKIPPED: $$c does not exist. The tests that prove vibe against"; \
	  echo "# real books are skipped, so this run does not cover them. Put the corpus at"; \
	  echo "# ../shared/corpus or set VIBE_TEST_CORPUS=/path/to/corpus. (CI=true: they fail.)"; \
	  echo "################################################################################"; \
	fi

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

test: test-deps tidy-check vet fmt-check corpus-check
	set -a; [ -f .vibe/test.env ] && . ./.vibe/test.env; set +a; \
	$(GO) test -race -timeout 40m $(PKGS) && \
	$(GO) test -timeout 15m -run '^($(NORACE))$$' $(NORACE_PKGS) && \
	bash scripts/fuzz.sh $(FUZZTIME)

# Every fuzz target runs this many executions in make test (the seed
# corpora also run in plain go test): a count, not a duration, so a loaded
# machine does the same work (3s gave the converters 5-10 executions at load
# 20; 300x takes 2-30 s a target at load 23). scripts/fuzz.sh 10m is the long
# run of docs/fuzz.md.
FUZZTIME := 300x

# The pass without -race. The race detector finds nothing in a test that runs
# one goroutine but slows it 5 to 60 times (the pure-Go SQLite, parsers over
# whole books). Such tests either shrink their corpus under -race (the first
# two: same assertions, 600 chunks instead of 3,000) or skip under it
# (racetest.SequentialOnly); both run here at full size without it.
# internal/racetest's TestNoRaceListIsComplete keeps these lists and the code
# in step. See docs/ci.md.
NORACE := TestLexicalTopKMatchesExhaustiveBM25|TestBM25MatchesSQLite|TestRetrievalQuality|TestFidelityAgainstReferenceTools|TestEncodingsAndChapterHeadings|TestPDFNumberedSectionHeadings|TestPDFFidelity|TestSplitCorpus|TestOfflineCorpus|TestPDFEngineSelection|TestDOJHandbookTextOnce|TestSplitBadInput|TestCounterOnTheCorpusBooks|TestVectorCodesKeepTheExactRanking|TestIVFRecall|TestOfflineBooks|TestCorpusTitles|TestWikisourceCorpusPages|TestTruncatedPDFRecoversPages|TestNoCutRulesBazi|TestCutRulesSurvey
NORACE_PKGS := ./knowledge/sqlite ./knowledge/pgvector ./eval ./convert ./chunk ./extract

# The inner loop: -short shrinks the slow tests (same assertions, smaller
# inputs); CI runs make test.
test-short: vet fmt-check corpus-check
	set -a; [ -f .vibe/test.env ] && . ./.vibe/test.env; set +a; \
	$(GO) test -race -short -timeout 20m $(PKGS)

fuzz:
	bash scripts/fuzz.sh $(FUZZTIME)

demo: build
	bash scripts/demo.sh $(BIN) $(DEMO)

# Every benchmark once, then a summary (bench/run.sh --help). BENCH passes
# arguments: make bench BENCH="--quick store".
bench:
	bash bench/run.sh $(BENCH)

clean:
	rm -rf bin $(DEMO)
