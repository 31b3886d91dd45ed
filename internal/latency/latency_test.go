package latency

import (
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	r := Start()
	for _, ms := range []int{5, 1, 4, 2, 3, 100, 6, 7, 8, 9} {
		r.d = append(r.d, time.Duration(ms)*time.Millisecond)
	}
	for _, tt := range []struct {
		q    float64
		want time.Duration
	}{{0, time.Millisecond}, {0.5, 5 * time.Millisecond}, {0.9, 9 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		if got := r.Percentile(tt.q); got != tt.want {
			t.Errorf("Percentile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if r.d[0] != 5*time.Millisecond {
		t.Error("Percentile sorted the recorded durations in place")
	}
	if (&Recorder{}).Percentile(0.5) != 0 {
		t.Error("empty recorder")
	}
}

func TestTimeRecordsAndPassesErrors(t *testing.T) {
	r := Start()
	if err := r.Time(func() error { time.Sleep(time.Millisecond); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(r.d) != 1 || r.d[0] < time.Millisecond {
		t.Fatalf("recorded %v", r.d)
	}
	want := errTest{}
	if err := r.Time(func() error { return want }); err != want {
		t.Fatalf("err = %v", err)
	}
}

type errTest struct{}

func (errTest) Error() string { return "test" }
