package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestSaveSkillData: deep merge into skill_data.<skill>, _meta.version and
// _meta.updated_at maintained, replace starts over; get_user_profile reads
// skills.<skill>... paths from there and reports what is missing.
func TestSaveSkillData(t *testing.T) {
	now := time.Date(2026, 1, 20, 8, 0, 0, 0, time.UTC)
	a, _ := newTestAgent(t, &fakeModel{}, func(c *Config) { c.Now = func() time.Time { return now } })
	ctx := context.Background()
	exec := func(tool, args string) map[string]any {
		t.Helper()
		res, err := a.ExecuteTool(ctx, "u", "bazi", tool, json.RawMessage(args), nil)
		if err != nil {
			t.Fatalf("%s %s: %v", tool, args, err)
		}
		m := map[string]any{}
		if err := json.Unmarshal(res, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	profile := func() string {
		m := exec("get_user_profile", `{"fields":["skills.bazi"]}`)
		b, _ := json.Marshal(m["found"].(map[string]any)["skills.bazi"])
		return string(b)
	}
	exec("save_skill_data", `{"data":{"chart":{"day_master":"甲","pillars":["庚午"]},"notes":"a"}}`)
	now = now.Add(time.Hour)
	if r := exec("save_skill_data", `{"data":{"chart":{"strength":"strong"},"_meta":{"version":99}}}`); r["version"] != 2.0 {
		t.Fatalf("second save = %v", r)
	}
	want := `{"_meta":{"updated_at":"2026-01-20T09:00:00Z","version":2},"chart":{"day_master":"甲","pillars":["庚午"],"strength":"strong"},"notes":"a"}`
	if got := profile(); got != want {
		t.Fatalf("merged = %s\nwant     %s", got, want)
	}
	exec("save_skill_data", `{"data":{"chart":{"day_master":"乙"}},"replace":true}`)
	want = `{"_meta":{"updated_at":"2026-01-20T09:00:00Z","version":3},"chart":{"day_master":"乙"}}`
	if got := profile(); got != want {
		t.Fatalf("replaced = %s\nwant       %s", got, want)
	}
	r := exec("get_user_profile", `{"fields":["skills.bazi.chart.day_master","identity.birth_info"]}`)
	if r["found"].(map[string]any)["skills.bazi.chart.day_master"] != "乙" || len(r["missing"].([]any)) != 1 || r["missing"].([]any)[0] != "identity.birth_info" {
		t.Fatalf("get_user_profile = %v", r)
	}
	if _, err := a.ExecuteTool(ctx, "u", "", "save_skill_data", json.RawMessage(`{"data":{"x":1}}`), nil); err == nil {
		t.Fatal("save_skill_data with no skill active or given succeeded")
	}
	// Only installed skills: a name is a key of the profile.
	for _, sn := range []string{"../alice", "*", "core", "nope", "bazi/../x"} {
		_, err := a.ExecuteTool(ctx, "u", "bazi", "save_skill_data", json.RawMessage(`{"skill":`+quote(sn)+`,"data":{"x":1}}`), nil)
		if err == nil || !strings.Contains(err.Error(), "unknown skill") || !strings.Contains(err.Error(), "installed: bazi") {
			t.Errorf("save_skill_data skill %q: %v", sn, err)
		}
	}
	if p := profile(); strings.Contains(p, `"x"`) {
		t.Errorf("a refused save changed the profile: %s", p)
	}
}
