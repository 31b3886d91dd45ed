package sqlite

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/knowledge/embedding"
)

// TestSearchStatementsDoNotWatchTheContext checks that a search under a
// cancellable context (vibe's commands and vibe serve's requests) costs
// what it costs under one that is never cancelled: its short statements
// run without the driver's watch of the context (a goroutine, a channel
// and database/sql's own goroutine a statement), and it is cancelled
// between them instead.
func TestSearchStatementsDoNotWatchTheContext(t *testing.T) {
	ctx := context.Background()
	local := embedding.NewLocal(256)
	s, c, write := zipfStore(t, 300, 30, 5, local.Model())
	for _, d := range c.Docs {
		write(d)
	}
	q := c.Query()
	vs, err := local.Embed(ctx, []string{q.Text})
	if err != nil {
		t.Fatal(err)
	}
	q.Vector = vs[0]
	cancellable, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, mode := range []knowledge.SearchMode{knowledge.SearchHybrid, knowledge.SearchLexical, knowledge.SearchVector} {
		q.Mode = mode
		// Each search reads its rows from the tables: the cache is
		// emptied before it (the theme's vectors stay loaded).
		search := func(ctx context.Context) []knowledge.Hit {
			emptyCache(s)
			hits, err := s.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			return hits
		}
		if got, want := search(cancellable), search(ctx); !reflect.DeepEqual(got, want) || len(got) == 0 {
			t.Fatalf("%s: %d hits under a cancellable context, %d under Background, or not the same", mode, len(got), len(want))
		}
		if raceEnabled {
			continue // the race detector's own allocations differ by context
		}
		background := testing.AllocsPerRun(20, func() { search(ctx) })
		watched := testing.AllocsPerRun(20, func() { search(cancellable) })
		// Watching costs at least four allocations a statement (21-40 a
		// search here); a pool emptied by a collection can add one.
		if watched > background+2 {
			t.Errorf("%s: a search allocates %.0f times under a cancellable context, %.0f under Background: its statements watch the context", mode, watched, background)
		}
	}
	// A cancelled search ends with the context's error.
	done, stop := context.WithCancel(ctx)
	stop()
	q.Mode = knowledge.SearchHybrid
	if _, err := s.Search(done, q); !errors.Is(err, context.Canceled) {
		t.Fatalf("a search under a cancelled context: %v, want context.Canceled", err)
	}
}
