package convert

import (
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"time"
)

// Defaults of the per-file bounds ([Options.Timeout], [Options.MaxMemoryBytes]).
const (
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxMemoryBytes = 2 << 30
)

// errMemoryBound is the cancellation cause when a conversion's heap growth
// passes Options.MaxMemoryBytes.
var errMemoryBound = errors.New("memory bound")

// memorySampleEvery is how often the memory watchdog samples the heap.
const memorySampleEvery = 20 * time.Millisecond

// bounded runs parse under the per-file bounds of opts: it returns when
// parse does, when opts.Timeout has passed (ErrTimeout), when the heap has
// grown by more than opts.MaxMemoryBytes since the start (ErrTooMuchMemory),
// or when ctx is done. parse gets a context cancelled on each of these, and
// parsers that can stop (pdfium, the page loops) do; a Go parser stuck in a
// loop of a third-party library cannot be stopped, and its goroutine is left
// behind to end with the process: the caller is never held. A panic in parse
// becomes ErrDamaged.
//
// The heap is the process's, plus the linear memory of the PDF engine's
// instances (outside the Go heap): with several workers the bound is
// approximate, which is enough to stop a file that inflates without end.
func bounded(ctx context.Context, opts Options, format string, parse func(context.Context) (Document, error)) (Document, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tctx, tcancel := context.WithTimeout(ctx, opts.Timeout)
	defer tcancel()

	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() int64 {
		// pdfium's linear memory lives outside the Go heap: counted too.
		n := opts.PDFium.offHeapBytes()
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return n
		}
		return n + int64(sample[0].Value.Uint64())
	}
	// The baseline is taken before the parser starts: a parser that grows
	// at once (or a scheduler that runs it first) must not hide that
	// growth in the baseline.
	base := heap()

	type result struct {
		doc Document
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("%w: the %s parser failed (%v); the file is probably damaged", ErrDamaged, format, p)}
			}
			done <- r
		}()
		r.doc, r.err = parse(tctx)
	}()

	tick := time.NewTicker(memorySampleEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			if r.err != nil && tctx.Err() != nil && ctx.Err() == nil || errors.Is(context.Cause(ctx), errMemoryBound) {
				return r.doc, boundError(ctx, tctx, opts)
			}
			return r.doc, r.err
		case <-tctx.Done():
			return Document{}, boundError(ctx, tctx, opts)
		case <-tick.C:
			if grown := heap() - base; grown > opts.MaxMemoryBytes {
				cancel(errMemoryBound)
				return Document{}, fmt.Errorf("%w: the %s parser grew the heap by %d MiB (limit %d MiB; raise convert.max_memory_bytes in vibe.yaml if the file is genuine)",
					ErrTooMuchMemory, format, grown>>20, opts.MaxMemoryBytes>>20)
			}
		}
	}
}

// boundError says which bound stopped a conversion: the caller's context,
// the memory bound or the time bound.
func boundError(ctx, tctx context.Context, opts Options) error {
	if errors.Is(context.Cause(ctx), errMemoryBound) {
		return fmt.Errorf("%w: limit %d MiB (raise convert.max_memory_bytes in vibe.yaml if the file is genuine)", ErrTooMuchMemory, opts.MaxMemoryBytes>>20)
	}
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	return fmt.Errorf("%w: not done after %s (raise convert.timeout in vibe.yaml if the file is genuine and large)", ErrTimeout, opts.Timeout)
}
