package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ingestPostgres ingests the converted theme of ws into a new schema of the
// PostgreSQL database at url, and prints vibe's CPU and the server's: the
// CPU of every postgres process, live ones' and the exited ones' the
// postmaster has reaped, before and after (other clients of the server
// meanwhile would count too: the bench says how many were connected).
func ingestPostgres(ctx context.Context, vibe, ws, url string) error {
	schema := fmt.Sprintf("vibe_ingestbench_%d", os.Getpid())
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return err
	}
	defer conn.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	cfg := fmt.Sprintf("store:\n  driver: postgres\n  database_url: %q\n", url+sep+"search_path="+schema+",public")
	if err := os.WriteFile(filepath.Join(ws, "vibe.yaml"), []byte(cfg), 0o644); err != nil {
		return err
	}
	defer os.Remove(filepath.Join(ws, "vibe.yaml"))
	others := func() int {
		var n int
		conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name NOT LIKE 'vibe%'`).Scan(&n)
		return n
	}
	load := loadavg()
	o0 := others()
	srv0, err := serverCPU()
	if err != nil {
		return err
	}
	cmd := vibeCmd(ctx, vibe, ws, "ingest", "gen")
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		return fmt.Errorf("vibe ingest: %w", err)
	}
	time.Sleep(time.Second) // the ingest's backends exit and are reaped
	srv1, err := serverCPU()
	if err != nil {
		return err
	}
	o1 := others()
	var chunks int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{schema, "kb_chunk"}.Sanitize()).Scan(&chunks); err != nil {
		return err
	}
	ps := cmd.ProcessState
	user, sys := ps.UserTime().Seconds(), ps.SystemTime().Seconds()
	srv := srv1 - srv0
	fmt.Printf("| %d | %.2f + %.2f = %.2f | %.2f | %.1f | %.3f, %.3f, %.3f | %s - %s (other clients of the server: %d, %d) |\n",
		chunks, user, sys, user+sys, srv, wall, 1000*(user+sys)/float64(chunks), 1000*srv/float64(chunks), 1000*(user+sys+srv)/float64(chunks),
		load, loadavg(), o0, o1)
	return nil
}

// serverCPU is the CPU seconds of the postgres processes on this machine:
// each one's user and system time, and the postmaster's reaped children's.
func serverCPU() (float64, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	var ticks int64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < 0 || s[open+1:close] != "postgres" {
			continue
		}
		// Fields after the command: state ppid ... utime (14) stime (15)
		// cutime (16) cstime (17), numbered from 1 with pid.
		f := strings.Fields(s[close+2:])
		if len(f) < 15 {
			continue
		}
		num := func(i int) int64 { v, _ := strconv.ParseInt(f[i-3], 10, 64); return v }
		ticks += num(14) + num(15)
		if ppid := num(4); !isPostgres(ppid) {
			ticks += num(16) + num(17) // the postmaster: its exited backends
		}
		_ = pid
	}
	return float64(ticks) / 100, nil // USER_HZ
}

func isPostgres(pid int64) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.TrimSpace(string(b)) == "postgres"
}
