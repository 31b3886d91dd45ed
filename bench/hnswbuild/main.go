// Command hnswbuild builds the PostgreSQL store's HNSW index by hand over the
// vectors a store already holds (a schema searchbench -ingest-only -keep
// left), once per ef_construction given, in one backend without parallel
// workers, and prints each build's CPU (the backend's, from /proc: the
// server must run on this machine) and wall time, and the index's recall@10
// at ef_search 200 against exact float32 search, the queries being stored
// vectors (by md5 of their chunk id). The index is built as the store
// builds it (on embedding::halfvec(dims), halfvec_cosine_ops, m 16); the
// last one built is left in place as kb_embedding_hnsw.
//
//	go run ./bench/hnswbuild -postgres URL -schema S -ef-construction 64,128,64,128
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	url := flag.String("postgres", "", "the database")
	schema := flag.String("schema", "", "the store's schema")
	efcs := flag.String("ef-construction", "64,128", "ef_construction of each build, in order")
	m := flag.Int("m", 16, "m of every build")
	nq := flag.Int("queries", 200, "stored vectors used as queries")
	efSearch := flag.Int("ef-search", 200, "hnsw.ef_search of the recall queries")
	flag.Parse()
	if err := run(*url, *schema, *efcs, *m, *nq, *efSearch); err != nil {
		fmt.Fprintln(os.Stderr, "hnswbuild:", err)
		os.Exit(1)
	}
}

func run(url, schema, efcs string, m, nq, efSearch int) error {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET search_path = `+pgx.Identifier{schema}.Sanitize()+`, public`); err != nil {
		return err
	}
	var pid, dims, rows int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid(), (SELECT dimensions FROM kb_embedding_info WHERE id = 1), (SELECT count(*) FROM kb_embedding)`).Scan(&pid, &dims, &rows); err != nil {
		return err
	}
	// The queries and their exact top 10 (float32 cosine, a sequential
	// scan: no index is on the float32 column).
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE q AS SELECT chunk_id AS qid, embedding AS v FROM kb_embedding ORDER BY md5(chunk_id) LIMIT `+strconv.Itoa(nq)); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE exact AS SELECT q.qid, e.chunk_id FROM q CROSS JOIN LATERAL (SELECT chunk_id FROM kb_embedding ORDER BY embedding <=> q.v LIMIT 10) e`); err != nil {
		return err
	}
	fmt.Printf("%d vectors of %d dims, %d queries; m %d, ef_search %d, one backend, maintenance_work_mem 1GB\n", rows, dims, nq, m, efSearch)
	fmt.Println("| ef_construction | build CPU s | build wall s | ms CPU a vector | recall@10 | load (start - end) |")
	fmt.Println("|---:|---:|---:|---:|---:|---|")
	for _, f := range strings.Split(efcs, ",") {
		efc, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-ef-construction: %q", f)
		}
		for _, st := range []string{
			`DROP INDEX IF EXISTS kb_embedding_hnsw`,
			`SET max_parallel_maintenance_workers = 0`,
			`SET maintenance_work_mem = '1GB'`,
		} {
			if _, err := conn.Exec(ctx, st); err != nil {
				return err
			}
		}
		load := loadavg()
		cpu0, err := procCPU(pid)
		if err != nil {
			return err
		}
		start := time.Now()
		if _, err := conn.Exec(ctx, fmt.Sprintf(`CREATE INDEX kb_embedding_hnsw ON kb_embedding USING hnsw ((embedding::halfvec(%d)) halfvec_cosine_ops) WITH (m = %d, ef_construction = %d)`, dims, m, efc)); err != nil {
			return err
		}
		wall := time.Since(start).Seconds()
		cpu1, err := procCPU(pid)
		if err != nil {
			return err
		}
		loadEnd := loadavg()
		recall, err := recallAt10(ctx, conn, dims, efSearch)
		if err != nil {
			return err
		}
		cpu := cpu1 - cpu0
		fmt.Printf("| %d | %.2f | %.1f | %.3f | %.4f | %s - %s |\n", efc, cpu, wall, 1000*cpu/float64(rows), recall, load, loadEnd)
	}
	return nil
}

// recallAt10 is the share of the queries' exact top 10 that the index's
// top 10 holds, searched as the store searches (vectorQuery).
func recallAt10(ctx context.Context, conn *pgx.Conn, dims, efSearch int) (float64, error) {
	for _, st := range []string{fmt.Sprintf(`SET hnsw.ef_search = %d`, efSearch), `SET hnsw.iterative_scan = strict_order`} {
		if _, err := conn.Exec(ctx, st); err != nil {
			return 0, err
		}
	}
	var found, total int
	err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM q CROSS JOIN LATERAL (SELECT chunk_id FROM kb_embedding WHERE theme = (SELECT theme FROM kb_embedding WHERE chunk_id = q.qid) ORDER BY embedding::halfvec(%d) <=> q.v::halfvec(%[1]d) LIMIT 10) a JOIN exact x ON x.qid = q.qid AND x.chunk_id = a.chunk_id), (SELECT count(*) FROM exact)`, dims)).Scan(&found, &total)
	if err != nil {
		return 0, err
	}
	return float64(found) / float64(total), nil
}

func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	sy, _ := strconv.ParseInt(f[12], 10, 64)
	return float64(u+sy) / 100, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}
