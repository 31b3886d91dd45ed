package convert

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
)

const maxZipEntries = 20000

// safeZip reads a zip container with bounds against zip bombs: the number of
// entries, each entry's inflated size and the total inflated size are capped.
type safeZip struct {
	r     *zip.Reader
	files map[string]*zip.File
	limit int64
	used  int64
}

func openZip(data []byte, limit int64) (*safeZip, error) {
	r, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: not a readable zip container (%v)", ErrDamaged, err)
	}
	if len(r.File) > maxZipEntries {
		return nil, fmt.Errorf("%w: %d entries in the container (at most %d)", ErrZipBomb, len(r.File), maxZipEntries)
	}
	z := &safeZip{r: r, files: map[string]*zip.File{}, limit: limit}
	var declared uint64
	for _, f := range r.File {
		z.files[f.Name] = f
		declared += f.UncompressedSize64
	}
	if declared > uint64(limit) {
		return nil, fmt.Errorf("%w: entries inflate to %d bytes (limit %d)", ErrZipBomb, declared, limit)
	}
	return z, nil
}

// read returns an entry's content; name is matched exactly, then
// case-insensitively.
func (z *safeZip) read(name string) ([]byte, error) {
	f := z.files[name]
	if f == nil {
		for n, ff := range z.files {
			if strings.EqualFold(n, name) {
				f = ff
				break
			}
		}
	}
	if f == nil {
		return nil, fmt.Errorf("entry %q: %w", name, errMissingEntry)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: entry %q: %v", ErrDamaged, name, err)
	}
	defer rc.Close()
	remaining := z.limit - z.used
	data, err := io.ReadAll(io.LimitReader(rc, remaining+1))
	if err != nil {
		return nil, fmt.Errorf("%w: entry %q: %v", ErrDamaged, name, err)
	}
	z.used += int64(len(data))
	if int64(len(data)) > remaining {
		return nil, fmt.Errorf("%w: entry %q inflates past the limit of %d bytes", ErrZipBomb, name, z.limit)
	}
	return data, nil
}

func (z *safeZip) has(name string) bool {
	_, ok := z.files[name]
	return ok
}

// find returns the names of entries whose base name satisfies match.
func (z *safeZip) find(match func(name string) bool) []string {
	var out []string
	for _, f := range z.r.File {
		if match(f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// resolve joins a relative href to the directory of base, dropping any
// fragment and decoding %-escapes.
func resolveHref(base, href string) string {
	if i := strings.IndexByte(href, '#'); i >= 0 {
		href = href[:i]
	}
	href = unescapePath(href)
	return path.Clean(path.Join(path.Dir(base), href))
}

func unescapePath(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var v byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02x", &v); err == nil {
				b.WriteByte(v)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
