package integrate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func dirSnapshot(t *testing.T, dir string) Snapshot {
	t.Helper()
	s, err := ParseSnapshot(func(name string) ([]byte, bool, error) {
		data, err := os.ReadFile(filepath.Join(dir, "knowledge", name))
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		return data, err == nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDiffBetweenFixtures(t *testing.T) {
	changes := Diff(dirSnapshot(t, "testdata/clean"), dirSnapshot(t, "testdata/faulty"))
	want := map[string]string{"T2_003": "added", "T3_001": "added", "P2_S1": "step-changed"}
	got := map[string]bool{}
	for _, c := range changes {
		got[c.Item+"/"+c.Kind] = true
	}
	for item, kind := range want {
		if !got[item+"/"+kind] {
			t.Errorf("diff lacks %s %s; got %+v", kind, item, changes)
		}
	}
	if len(Diff(dirSnapshot(t, "testdata/clean"), dirSnapshot(t, "testdata/clean"))) != 0 {
		t.Error("a build differs from itself")
	}
	var b bytes.Buffer
	if err := WriteDiff(&b, changes); err != nil {
		t.Fatal(err)
	}
	golden(t, "diff.clean-faulty.golden", b.Bytes())
}
