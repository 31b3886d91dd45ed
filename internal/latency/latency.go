// Package latency records per-operation latencies in benchmarks and reports
// their percentiles and the process CPU time per operation. On a machine
// shared with other work the wall-clock percentiles move with the load; the
// CPU time per operation does much less.
package latency

import (
	"slices"
	"testing"
	"time"
)

// Recorder collects the duration of each operation of a benchmark. It is
// not safe for concurrent use.
type Recorder struct {
	d        []time.Duration
	cpuStart time.Duration
}

// Start begins recording: call it before the benchmark loop.
func Start() *Recorder { return &Recorder{cpuStart: processCPU()} }

// Time runs op and records how long it took.
func (r *Recorder) Time(op func() error) error {
	start := time.Now()
	err := op()
	r.d = append(r.d, time.Since(start))
	return err
}

// Percentile returns the q-quantile (0..1) of the recorded durations.
func (r *Recorder) Percentile(q float64) time.Duration {
	if len(r.d) == 0 {
		return 0
	}
	s := slices.Clone(r.d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// Report adds p50-ms, p90-ms, p99-ms and cpu-ms/op (the process's user and
// system CPU time since Start, over the operations recorded) to b.
func (r *Recorder) Report(b *testing.B) {
	if len(r.d) == 0 {
		return
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(ms(r.Percentile(0.50)), "p50-ms")
	b.ReportMetric(ms(r.Percentile(0.90)), "p90-ms")
	b.ReportMetric(ms(r.Percentile(0.99)), "p99-ms")
	if cpu := processCPU(); cpu > 0 {
		b.ReportMetric(ms(cpu-r.cpuStart)/float64(len(r.d)), "cpu-ms/op")
	}
}

// ProcessCPU returns the user plus system CPU time of the process so far
// (0 where it is not measured).
func ProcessCPU() time.Duration { return processCPU() }
