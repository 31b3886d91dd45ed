package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ingestPostgres ingests the converted theme of ws into a new schema of the
// PostgreSQL database at url, and prints vibe's CPU and the server's: that
// of the backends serving the ingest (sampler), and that of every postgres
// process, live ones' and the exited ones' the postmaster has reaped,
// before and after (other clients of the server count there too: the bench
// says how many were connected).
func ingestPostgres(ctx context.Context, vibe, ws, url string, keep bool) error {
	schema := fmt.Sprintf("vibe_ingestbench_%d_%s", os.Getpid(), filepath.Base(ws))
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "searchbench: schema %s kept\n", schema)
	} else {
		defer conn.Exec(context.Background(), `DROP SCHEMA `+schema+` CASCADE`)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	app := "vibe_ingestbench_" + strconv.Itoa(os.Getpid())
	cfg := fmt.Sprintf("store:\n  driver: postgres\n  database_url: %q\n", url+sep+"search_path="+schema+",public&application_name="+app)
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
	sconn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer sconn.Close(context.Background())
	smp := &sampler{app: app, last: map[int]int64{}, by: map[string]int64{}}
	sctx, stop := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			smp.sample(sctx, sconn)
			select {
			case <-sctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	cmd := vibeCmd(ctx, vibe, ws, "ingest", "gen")
	start := time.Now()
	err = cmd.Run()
	wall := time.Since(start).Seconds()
	stop()
	<-sampled
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
	all := srv1 - srv0
	srv := float64(smp.total()) / 100
	fmt.Printf("| %d | %.2f + %.2f = %.2f | %.2f (%.2f) | %.1f | %.3f, %.3f, %.3f | %s - %s (other clients of the server: %d, %d) |\n",
		chunks, user, sys, user+sys, srv, all, wall, 1000*(user+sys)/float64(chunks), 1000*srv/float64(chunks), 1000*(user+sys+srv)/float64(chunks),
		load, loadavg(), o0, o1)
	var kinds []string
	for k := range smp.by {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var split []string
	for _, k := range kinds {
		split = append(split, fmt.Sprintf("%s %.3f", k, 10*float64(smp.by[k])/float64(chunks)))
	}
	fmt.Printf("|   | server ms a chunk by statement: %s |\n", strings.Join(split, ", "))
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

// sampler charges the CPU of the server processes that serve the ingest
// (backends whose application_name is app, and their parallel workers) to
// what they run: every 0.2 s it reads pg_stat_activity and each such
// process's CPU from /proc, and charges the CPU since the last sample (all
// of it for a process seen for the first time) to the kind of statement the
// process runs. Other clients of the server are not counted. A backend's
// CPU after the last sample before it exits is lost (at most 0.2 s each;
// the ingest's backends live for the whole run).
type sampler struct {
	app  string
	last map[int]int64
	by   map[string]int64 // CPU ticks by kind
}

func statementKind(q string) string {
	t := strings.TrimSpace(q)
	switch {
	case strings.Contains(q, "USING hnsw"):
		return "hnsw build"
	case strings.HasPrefix(t, "VACUUM"):
		return "vacuum"
	case strings.Contains(q, "kb_lex_posting"):
		return "lexical"
	case strings.HasPrefix(t, "COPY"):
		return "copy"
	default:
		return "other"
	}
}

func (s *sampler) total() int64 {
	var n int64
	for _, v := range s.by {
		n += v
	}
	return n
}

func (s *sampler) sample(ctx context.Context, conn *pgx.Conn) {
	rows, err := conn.Query(ctx, `SELECT pid, coalesce(query, ''), coalesce(state, ''), coalesce(application_name, ''), coalesce(leader_pid, 0) FROM pg_stat_activity`)
	if err != nil {
		return
	}
	type act struct {
		pid, leader    int
		q, state, name string
	}
	var acts []act
	for rows.Next() {
		var a act
		if rows.Scan(&a.pid, &a.q, &a.state, &a.name, &a.leader) == nil {
			acts = append(acts, a)
		}
	}
	rows.Close()
	ours := map[int]bool{}
	for _, a := range acts {
		if a.name == s.app {
			ours[a.pid] = true
		}
	}
	kind := map[int]string{}
	for _, a := range acts {
		if ours[a.pid] || ours[a.leader] {
			kind[a.pid] = "idle, commit"
			if a.state == "active" {
				kind[a.pid] = statementKind(a.q)
			}
		}
	}
	now := map[int]int64{}
	for pid, k := range kind {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		st := string(b)
		close := strings.LastIndexByte(st, ')')
		if close < 0 {
			continue
		}
		f := strings.Fields(st[close+2:])
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		sy, _ := strconv.ParseInt(f[12], 10, 64)
		now[pid] = u + sy
		s.by[k] += now[pid] - s.last[pid]
	}
	for pid, v := range s.last {
		if _, ok := now[pid]; !ok {
			now[pid] = v // gone, or not seen this time
		}
	}
	s.last = now
}
