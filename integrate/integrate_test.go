package integrate

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"
)

func TestRebuildOfUnchangedKnowledgeWritesNothing(t *testing.T) {
	dir := copyDir(t, "testdata/clean")
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opt := IntegrateOptions{Theme: "demo", SkillDir: dir, Now: func() time.Time { return clock }}
	res, err := Integrate(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	var before [3][]byte
	for i, p := range []string{res.SkillMD, res.ToolsYAML, res.MetaJSON} {
		before[i], _ = os.ReadFile(p)
	}
	clock = clock.Add(time.Hour)
	if _, err := Integrate(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{res.SkillMD, res.ToolsYAML, res.MetaJSON} {
		after, _ := os.ReadFile(p)
		if string(after) != string(before[i]) {
			t.Errorf("%s changed on an unchanged rebuild", p)
		}
	}
}

func TestIntegrateWithoutKnowledge(t *testing.T) {
	_, err := Integrate(context.Background(), IntegrateOptions{Theme: "demo", SkillDir: t.TempDir()})
	if err == nil || !errors.Is(err, ErrNoKnowledge) {
		t.Fatalf("err = %v, want ErrNoKnowledge", err)
	}
}
