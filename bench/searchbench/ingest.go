package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vibelife/vibe/knowledge/sqlite"
)

// ingestSize converts the corpus of about n chunks once (kept in ws, stamped
// "converted"), then ingests it into a new store, as `vibe build` does after
// conversion, while probe plays another writer of the same file (vibe serve
// writing its memory tables, or another theme's build).
func ingestSize(ctx context.Context, vibe, ws string, n int, pgURL string, keep bool) error {
	stamp := filepath.Join(ws, "converted")
	if _, err := os.Stat(stamp); err != nil {
		c := newCorpus(n)
		if err := os.RemoveAll(ws); err != nil {
			return err
		}
		books := filepath.Join(ws, "books")
		if err := os.MkdirAll(books, 0o755); err != nil {
			return err
		}
		for i, b := range c.books {
			if err := os.WriteFile(filepath.Join(books, fmt.Sprintf("book%05d.md", i)), []byte(b), 0o644); err != nil {
				return err
			}
		}
		theme := filepath.Join(ws, "knowledge", "gen")
		if err := os.MkdirAll(theme, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(theme, "curate.yaml"), []byte("sources:\n  - books\n"), 0o644); err != nil {
			return err
		}
		for _, args := range [][]string{{"curate", "gen"}, {"convert", "gen"}} {
			if _, _, _, err := run(vibeCmd(ctx, vibe, ws, args...)); err != nil {
				return err
			}
		}
		if err := os.WriteFile(stamp, nil, 0o644); err != nil {
			return err
		}
	}
	if pgURL != "" {
		return ingestPostgres(ctx, vibe, ws, pgURL, keep)
	}
	if err := os.Remove(filepath.Join(ws, "vibe.yaml")); err != nil && !os.IsNotExist(err) {
		return err
	}
	db := filepath.Join(ws, ".vibe", "vibe.db")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(db + suffix); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	load := loadavg()
	pctx, stop := context.WithCancel(ctx)
	var waits []time.Duration
	var perr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		waits, perr = probe(pctx, db)
	}()
	cmd := vibeCmd(ctx, vibe, ws, "ingest", "gen")
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	stop()
	wg.Wait()
	if err != nil {
		return fmt.Errorf("vibe ingest: %w", err)
	}
	if perr != nil {
		return fmt.Errorf("probe: %w", perr)
	}
	ps := cmd.ProcessState
	user, sys := ps.UserTime().Seconds(), ps.SystemTime().Seconds()
	st, err := sqlite.Open(ctx, db)
	if err != nil {
		return err
	}
	chunks, err := st.Chunks(ctx, "gen")
	st.Close()
	if err != nil {
		return err
	}
	slices.Sort(waits)
	var longest, p99 time.Duration
	over := 0
	if len(waits) > 0 {
		longest, p99 = waits[len(waits)-1], waits[len(waits)*99/100]
	}
	for _, w := range waits {
		if w > time.Second {
			over++
		}
	}
	fmt.Printf("| %d | %.2f + %.2f = %.2f | %.1f | %.3f | %.2f s, %.3f s, %d (of %d) | %s - %s |\n",
		len(chunks), user, sys, user+sys, wall, 1000*(user+sys)/float64(len(chunks)),
		longest.Seconds(), p99.Seconds(), over, len(waits), load, loadavg())
	return nil
}

// probe takes the write lock of the store at path (BEGIN IMMEDIATE) every
// 20 ms until ctx ends, and returns how long each took: when the lock is
// held it tries again every millisecond (busy_timeout 0), so a wait is the
// rest of the hold it met, to a millisecond, not the sleeps of SQLite's
// busy handler (which sleeps up to 100 ms between tries: a vibe serve
// writing meanwhile waits that much longer). It starts once the ingest has
// made the store.
func probe(ctx context.Context, path string) ([]time.Duration, error) {
	for {
		if _, err := os.Stat(path); err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(20 * time.Millisecond):
		}
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(0)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var waits []time.Duration
	for ctx.Err() == nil {
		t := time.Now()
		for {
			// Not ctx: a wait cut short by the ingest's end would not be one.
			tx, err := db.BeginTx(context.Background(), nil)
			if err == nil {
				waits = append(waits, time.Since(t))
				if err := tx.Commit(); err != nil {
					return waits, err
				}
				break
			}
			if !strings.Contains(err.Error(), "SQLITE_BUSY") && !strings.Contains(err.Error(), "database is locked") {
				return waits, err
			}
			time.Sleep(time.Millisecond)
		}
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
	return waits, nil
}
