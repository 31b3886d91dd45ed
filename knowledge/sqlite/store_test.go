package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vibelife/vibe/chunk"
	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/lexical"
	"github.com/vibelife/vibe/knowledge/storetest"
)

func openTemp(t *testing.T) knowledge.Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestContract(t *testing.T) { storetest.Run(t, openTemp) }

func TestReopenKeepsDataAndMigratesOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", "vibe.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceDocument(ctx, knowledge.Document{ID: "d", Theme: "t", ContentHash: "h"}, nil, nil, knowledge.EmbeddingInfo{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	docs, err := s.Documents(ctx, "t")
	if err != nil || len(docs) != 1 || docs[0].ContentHash != "h" {
		t.Fatalf("docs after reopen = %+v, %v", docs, err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Fatalf("schema_migrations rows = %d, %v; want %d", n, err, len(migrations))
	}
}

func TestVectorCodec(t *testing.T) {
	for _, v := range [][]float32{nil, {0}, {1.5, -2.25, 3e-9}} {
		got := DecodeVector(EncodeVector(v))
		if len(got) != len(v) {
			t.Fatalf("len %d, want %d", len(got), len(v))
		}
		for i := range v {
			if got[i] != v[i] {
				t.Fatalf("got %v, want %v", got, v)
			}
		}
	}
}

// TestCrashMidWrite kills a process in the middle of its writes and checks
// the reopened database holds whole documents only, passes SQLite's
// integrity check and its lexical index matches its chunks.
func TestCrashMidWrite(t *testing.T) {
	if target := os.Getenv(storetest.CrashEnv); target != "" {
		s, err := Open(context.Background(), target)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		storetest.CrashChild(s)
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	storetest.RunCrash(t, "TestCrashMidWrite", path, func(t *testing.T, target string) knowledge.Store {
		s, err := Open(context.Background(), target)
		if err != nil {
			t.Fatalf("reopen after the crash: %v", err)
		}
		return s
	}, func(t *testing.T, ks knowledge.Store) {
		s := ks.(*Store)
		var res string
		if err := s.db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
			t.Errorf("integrity_check = %q, %v", res, err)
		}
		checkLexIndex(t, s)
	})
}

// fill loads hits in batches of fillBatch ids, keeps their order and leaves
// out the ids whose chunk is gone.
func TestFillBatchesAndKeepsOrder(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "vibe.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var chunks []chunk.Chunk
	for i := 0; i < 3; i++ {
		chunks = append(chunks, chunk.Chunk{ID: fmt.Sprintf("c%d", i), Doc: "d", Source: "s.md", Ordinal: i, Text: fmt.Sprintf("text %d", i)})
	}
	if err := s.ReplaceDocument(ctx, knowledge.Document{ID: "d", Theme: "t", ContentHash: "h"}, chunks, nil, knowledge.EmbeddingInfo{}); err != nil {
		t.Fatal(err)
	}
	var hits []knowledge.Hit
	var want []string
	for i := 0; i < 2*fillBatch+7; i++ {
		id := fmt.Sprintf("c%d", (i*7)%5) // c3 and c4 do not exist
		hits = append(hits, knowledge.Hit{Chunk: chunk.Chunk{ID: id}, Score: float64(i)})
		if (i*7)%5 < 3 {
			want = append(want, id)
		}
	}
	got, err := s.fill(ctx, hits)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d hits filled, want %d", len(got), len(want))
	}
	for i, h := range got {
		if h.Chunk.ID != want[i] || h.Chunk.Text != "text "+want[i][1:] || i > 0 && h.Score <= got[i-1].Score {
			t.Fatalf("hit %d = %s %q score %g, want %s in order", i, h.Chunk.ID, h.Chunk.Text, h.Score, want[i])
		}
	}
	if got, err := s.fill(ctx, nil); err != nil || got == nil || len(got) != 0 {
		t.Errorf("fill(nil) = %#v, %v; want an empty non-nil list", got, err)
	}
}

// TestMigrateToLexIndex upgrades a store of migration 9, whose lexical
// index is FTS5's, to vibe's own: the stored chunks are indexed (the index
// matches them exactly and searches rank them as BM25 over their text),
// and documents replaced and deleted after the upgrade lose exactly their
// own postings.
func TestMigrateToLexIndex(t *testing.T) {
	ctx := context.Background()
	var stmts []string
	for _, theme := range []string{"t", "u"} {
		for _, d := range []string{"a", "b", "c"} {
			doc := theme + d
			stmts = append(stmts,
				`INSERT INTO documents(id, theme, source, title, content_hash, chunks, updated_at) VALUES ('`+doc+`', '`+theme+`', 's', 'Title `+d+`', 'h', 3, '2026-01-01T00:00:00Z')`)
			for _, n := range []string{"0", "1", "2"} {
				id := doc + n
				text := "word" + id + " shared common common " + d + n + " 滴天髓"
				stmts = append(stmts,
					`INSERT INTO chunk_fts(chunk_id, theme, tokens) VALUES ('`+id+`', '`+theme+`', '`+text+`')`,
					`INSERT INTO chunks(id, doc_id, theme, ordinal, source, title, heading_path, start_off, end_off, text, tokens, fts_rowid) VALUES ('`+id+`', '`+doc+`', '`+theme+`', `+n+`, 's', 'Title `+d+`', '["Part `+n+`"]', 0, 1, '`+text+`', 6, last_insert_rowid())`)
			}
		}
	}
	path := dbAt(t, 9, stmts...)
	st, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checkLexIndex(t, st)
	for _, q := range []string{"wordta1 shared", "common 滴天", "title b part 2", "wordub0"} {
		for _, theme := range []string{"t", "u"} {
			hits, err := st.Search(ctx, knowledge.Query{Theme: theme, Text: q, K: 10, Mode: knowledge.SearchLexical})
			if err != nil {
				t.Fatal(err)
			}
			sameRanking(t, theme+" "+q, hits, exhaustiveBM25(t, st, theme, lexical.QueryTokens(q)), 10)
		}
	}
	doc := knowledge.Document{ID: "ta", Theme: "t", Source: "s", Title: "a", ContentHash: "h2"}
	if err := st.ReplaceDocument(ctx, doc, []chunk.Chunk{{ID: "a9", Doc: "ta", Source: "s", Text: "new text shared", Tokens: 3}}, nil, knowledge.EmbeddingInfo{}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteDocument(ctx, "u", "ub"); err != nil {
		t.Fatal(err)
	}
	checkLexIndex(t, st)
	hits, err := st.Search(ctx, knowledge.Query{Theme: "t", Text: "new text", Mode: knowledge.SearchLexical})
	if err != nil || len(hits) != 1 || hits[0].Chunk.ID != "a9" {
		t.Fatalf("search after the upgrade = %+v %v", hits, err)
	}
	var fts int
	if err := st.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name LIKE 'chunk_fts%'`).Scan(&fts); err != nil || fts != 0 {
		t.Fatalf("%d chunk_fts tables left after the upgrade (%v)", fts, err)
	}
}

// A store a newer vibe migrated is refused, naming the file, both versions
// and what to do; nothing of it is changed.
func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vibe.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	newer := knownVersion() + 1
	if _, err := s.db.Exec(`INSERT INTO schema_migrations(version, name) VALUES (?, 'from the future')`, newer); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err = Open(ctx, path)
	if !errors.Is(err, knowledge.ErrSchemaNewer) {
		t.Fatalf("Open of a version %d store = %v, want ErrSchemaNewer", newer, err)
	}
	for _, want := range []string{path, fmt.Sprintf("schema version %d", newer), fmt.Sprintf("(%d)", knownVersion()), "upgrade vibe"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The store at this binary's version opens again once the row goes.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM schema_migrations WHERE version > ?`, knownVersion()).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows above the known version after the refusal = %d, %v; want 1 (untouched)", n, err)
	}
	if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = ?`, newer); err != nil {
		t.Fatal(err)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatalf("Open at the known version: %v", err)
	}
	s.Close()
}

// plainStrings decodes what json.Unmarshal decodes, or declines.
func TestPlainStringsAsJSON(t *testing.T) {
	for _, s := range []string{`[]`, `["第一章"]`, `["a","b c","第1节"]`, `[""]`, `["",""]`, `["a\"b"]`, `["\u00e9"]`, `[ "a"]`, `["a",]`, `["a"`, `null`, `["a","b"`, `[1]`, `["a"]x`, "[\"a\tb\"]", "[\"\xff\"]", `["a","b"]`, `["]"]`, `[","]`} {
		got, ok := plainStrings(s)
		var want []string
		err := json.Unmarshal([]byte(s), &want)
		if ok && (err != nil || !reflect.DeepEqual(got, want)) {
			t.Errorf("%q: %#v, json.Unmarshal %#v (%v)", s, got, want, err)
		}
	}
	if got, ok := plainStrings(`["甲","乙"]`); !ok || len(got) != 2 {
		t.Errorf("a plain array declined: %v %v", got, ok)
	}
}
