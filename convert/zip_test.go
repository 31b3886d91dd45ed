package convert

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

// lyingZip has one entry whose header claims 10 bytes but inflates to n.
func lyingZip(t *testing.T, name string, n int) []byte {
	t.Helper()
	payload := bytes.Repeat([]byte{'a'}, n)
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write(payload)
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc32.ChecksumIEEE(payload),
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 10})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	return buf.Bytes()
}

func TestSafeZipBounds(t *testing.T) {
	// One entry past the limit, stored (not deflated): a deflate writer
	// per entry made building this archive take 134 s under -race.
	many := func() []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for i := 0; i <= maxZipEntries; i++ {
			if _, err := zw.CreateHeader(&zip.FileHeader{Name: fmt.Sprintf("f%d", i), Method: zip.Store}); err != nil {
				t.Fatal(err)
			}
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	tests := []struct {
		name  string
		data  []byte
		limit int64
		entry string
		want  error
	}{
		{"declared size past the limit", zipBytes(t, "big", strings.Repeat("z", 5000)), 1000, "", ErrZipBomb},
		{"too many entries", many(), 1 << 30, "", ErrZipBomb},
		{"header lies about the size", lyingZip(t, "word/document.xml", 1<<20), 4096, "word/document.xml", nil},
		{"truncated archive", zipBytes(t, "a", "hello")[:20], 1 << 20, "", ErrDamaged},
		{"missing entry", zipBytes(t, "a", "hello"), 1 << 20, "b", errMissingEntry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z, err := openZip(tt.data, tt.limit)
			if err == nil && tt.entry != "" {
				_, err = z.read(tt.entry)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			// A lying header must fail either as a bomb or as damaged,
			// never inflate unbounded.
			if tt.want == nil && !errors.Is(err, ErrZipBomb) && !errors.Is(err, ErrDamaged) {
				t.Fatalf("err = %v, want ErrZipBomb or ErrDamaged", err)
			}
		})
	}
}
