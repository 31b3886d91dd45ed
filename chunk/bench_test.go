package chunk

import (
	"context"
	"path/filepath"
	"testing"
)

// TestNewOffline loads both encodings with every network path poisoned: the
// BPE files must come from the embedded assets.
func TestNewOffline(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("TIKTOKEN_CACHE_DIR", t.TempDir())
	tests := []struct {
		enc  string
		text string
		want int
	}{
		{EncodingCL100K, "hello world", 2},
		{EncodingO200K, "hello world", 2},
	}
	for _, tt := range tests {
		t.Run(tt.enc, func(t *testing.T) {
			s, err := New(Options{Encoding: tt.enc})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Count(tt.text); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.text, got, tt.want)
			}
		})
	}
}

// BenchmarkSplit measures chunking throughput on 三命通会 (2 MB).
func BenchmarkSplit(b *testing.B) {
	data := corpusConverted(b, filepath.Join(corpusDir(b), "bazi", "三命通会.md"))
	s := newSplitter(b, Options{MaxTokens: 512, Overlap: 64})
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := s.SplitFile(context.Background(), "x.md", data); err != nil {
			b.Fatal(err)
		}
	}
}
