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
//
// With -sweep it then runs the queries one at a time as the store runs them
// (vectorQuery's shape, the query vector a parameter), once per hnsw.ef_search
// of -ef-search and candidate count of -fetch (0: LIMIT 10 straight from the
// index; F: the index's first F re-ordered by exact float32 cosine, the top
// 10 kept), and prints recall@10, the backend's CPU and the wall time a
// query. An empty -ef-construction builds nothing (the index in place).
//
//	go run ./bench/hnswbuild -postgres URL -schema S -ef-construction '' -sweep -ef-search 200,400,800 -fetch 0,100
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
	pgv "github.com/pgvector/pgvector-go"
)

func main() {
	url := flag.String("postgres", "", "the database")
	schema := flag.String("schema", "", "the store's schema")
	efcs := flag.String("ef-construction", "64,128", "ef_construction of each build, in order")
	m := flag.Int("m", 16, "m of every build")
	nq := flag.Int("queries", 200, "stored vectors used as queries")
	efSearch := flag.String("ef-search", "200", "hnsw.ef_search of the recall queries (the first for the builds' recall; with -sweep, each)")
	sweep := flag.Bool("sweep", false, "after the builds, measure recall and query cost at each -ef-search and -fetch")
	fetch := flag.String("fetch", "0", "with -sweep: candidates taken from the index and re-ranked exactly, each (0: none, LIMIT 10)")
	flag.Parse()
	efs, err := ints(*efSearch)
	if err == nil {
		var fetches []int
		if fetches, err = ints(*fetch); err == nil {
			err = run(*url, *schema, *efcs, *m, *nq, efs, *sweep, fetches)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hnswbuild:", err)
		os.Exit(1)
	}
}

func ints(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("not a number: %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(url, schema, efcs string, m, nq int, efSearches []int, sweep bool, fetches []int) error {
	efSearch := 200
	if len(efSearches) > 0 {
		efSearch = efSearches[0]
	}
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
	if _, err := conn.Exec(ctx, `CREATE TEMP TABLE exact AS SELECT q.qid, e.chunk_id, e.d FROM q CROSS JOIN LATERAL (SELECT chunk_id, embedding <=> q.v AS d FROM kb_embedding ORDER BY embedding <=> q.v LIMIT 10) e`); err != nil {
		return err
	}
	fmt.Printf("%d vectors of %d dims, %d queries; m %d, ef_search %d, one backend, maintenance_work_mem 1GB\n", rows, dims, nq, m, efSearch)
	fmt.Println("| ef_construction | build CPU s | build wall s | ms CPU a vector | recall@10 | load (start - end) |")
	fmt.Println("|---:|---:|---:|---:|---:|---|")
	builds, err := ints(efcs)
	if err != nil {
		return fmt.Errorf("-ef-construction: %w", err)
	}
	for _, efc := range builds {
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
	if sweep {
		return sweepSearch(ctx, conn, pid, dims, efSearches, fetches)
	}
	return nil
}

// sweepSearch runs each query alone, as the store does, at each ef_search
// and candidate count, and prints recall@10 (by chunk id, and counting any
// hit no farther than the exact tenth: ties), the backend's CPU and the
// wall time a query.
func sweepSearch(ctx context.Context, conn *pgx.Conn, pid, dims int, efSearches, fetches []int) error {
	type query struct {
		v     []float32
		theme string
		exact map[string]bool
		tenth float64
	}
	rows, err := conn.Query(ctx, `SELECT q.qid, q.v::real[], e.theme, x.ids, x.tenth FROM q JOIN kb_embedding e ON e.chunk_id = q.qid
		CROSS JOIN LATERAL (SELECT array_agg(chunk_id) AS ids, max(d) AS tenth FROM exact WHERE exact.qid = q.qid) x ORDER BY md5(q.qid)`)
	if err != nil {
		return err
	}
	var qs []query
	for rows.Next() {
		var id string
		var ids []string
		var qu query
		if err := rows.Scan(&id, &qu.v, &qu.theme, &ids, &qu.tenth); err != nil {
			return err
		}
		qu.exact = map[string]bool{}
		for _, c := range ids {
			qu.exact[c] = true
		}
		qs = append(qs, qu)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	fmt.Printf("\n%d queries one at a time, the store's statement (iterative_scan strict_order)\n", len(qs))
	fmt.Println("| ef_search | candidates re-ranked | recall@10 | with ties | ms CPU a query (backend) | ms wall a query | load (start - end) |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---|")
	plain := fmt.Sprintf(`SELECT chunk_id, embedding <=> $1 FROM kb_embedding WHERE theme = $2 ORDER BY embedding::halfvec(%d) <=> $1::halfvec(%[1]d) LIMIT $3`, dims)
	over := `SELECT chunk_id, d FROM (SELECT chunk_id, embedding <=> $1 AS d FROM kb_embedding WHERE theme = $2 ORDER BY embedding::halfvec(` + strconv.Itoa(dims) + `) <=> $1::halfvec(` + strconv.Itoa(dims) + `) LIMIT $4) c ORDER BY d, chunk_id LIMIT $3`
	if _, err := conn.Exec(ctx, `SET hnsw.iterative_scan = strict_order`); err != nil {
		return err
	}
	for _, ef := range efSearches {
		if _, err := conn.Exec(ctx, fmt.Sprintf(`SET hnsw.ef_search = %d`, ef)); err != nil {
			return err
		}
		for _, f := range fetches {
			load := loadavg()
			cpu0, err := procCPU(pid)
			if err != nil {
				return err
			}
			start := time.Now()
			var found, tied, total int
			for _, qu := range qs {
				var rows pgx.Rows
				if f > 0 {
					rows, err = conn.Query(ctx, over, pgv.NewVector(qu.v), qu.theme, 10, f)
				} else {
					rows, err = conn.Query(ctx, plain, pgv.NewVector(qu.v), qu.theme, 10)
				}
				if err != nil {
					return err
				}
				for rows.Next() {
					var id string
					var d float64
					if err := rows.Scan(&id, &d); err != nil {
						return err
					}
					if qu.exact[id] {
						found++
					}
					if d <= qu.tenth+1e-9 {
						tied++
					}
				}
				if err := rows.Err(); err != nil {
					return err
				}
				total += len(qu.exact)
			}
			wall := time.Since(start).Seconds()
			cpu1, err := procCPU(pid)
			if err != nil {
				return err
			}
			n := float64(len(qs))
			fmt.Printf("| %d | %d | %.4f | %.4f | %.2f | %.2f | %s - %s |\n", ef, f, float64(found)/float64(total), float64(tied)/float64(total), 1000*(cpu1-cpu0)/n, 1000*wall/n, load, loadavg())
		}
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
