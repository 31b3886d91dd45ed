package knowledge

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/vibelife/vibe/internal/atomicfile"
)

// File names of the knowledge files in skills/<theme>/knowledge/.
const (
	SOPFileName      = "sop.yaml"
	PatternsFileName = "patterns.yaml"
	RulesFileName    = "rules.yaml"
)

// Files are the three knowledge files of a skill.
type Files struct {
	SOP      SOPFile
	Patterns PatternsFile
	Rules    RulesFile
}

// Encode returns v as YAML with two-space indentation. Field order follows
// the struct declarations and items keep their slice order, so the same
// value always encodes to the same bytes.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeFile decodes one YAML file into v, naming the file in errors.
func decodeFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s: %w (fix the YAML or delete the file to regenerate it)", path, err)
	}
	return nil
}

// ReadFiles reads sop.yaml, patterns.yaml and rules.yaml from dir. A missing
// file leaves its part zero; found reports whether any file existed.
func ReadFiles(dir string) (f Files, found bool, err error) {
	parts := []struct {
		name string
		v    any
	}{
		{SOPFileName, &f.SOP},
		{PatternsFileName, &f.Patterns},
		{RulesFileName, &f.Rules},
	}
	for _, p := range parts {
		err := decodeFile(filepath.Join(dir, p.name), p.v)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Files{}, found, err
		}
		found = true
	}
	return f, found, nil
}

// WriteFiles writes the three files into dir atomically, one by one, and
// skips a file whose bytes would not change. It returns the names written.
func WriteFiles(dir string, f Files) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write knowledge files: %w", err)
	}
	var written []string
	parts := []struct {
		name string
		v    any
	}{
		{SOPFileName, f.SOP},
		{PatternsFileName, f.Patterns},
		{RulesFileName, f.Rules},
	}
	for _, p := range parts {
		data, err := Encode(p.v)
		if err != nil {
			return written, fmt.Errorf("encode %s: %w", p.name, err)
		}
		path := filepath.Join(dir, p.name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
			return written, fmt.Errorf("write %s: %w", path, err)
		}
		written = append(written, p.name)
	}
	return written, nil
}
