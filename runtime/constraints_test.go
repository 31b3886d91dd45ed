package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const chartTools = `tools:
  - name: chart
    type: compute
    description: casts a chart
    parameters:
      - {name: birth, type: string, required: true, format: date-time, not_future: true}
      - {name: gender, type: string, enum: [male, female]}
      - {name: number, type: integer, minimum: 1, maximum: 9}
      - {name: code, type: string, pattern: "^[A-Z]{2}$"}
      - {name: zone, type: string, default: Asia/Shanghai}
    plugin: {url: %q, timeout: 2s}
`

// A constrained parameter is refused before the plugin runs, the error is
// what the model reads, a default fills a missing argument, and the
// function schema the model gets carries the constraints.
func TestParameterConstraintsBeforeThePluginRuns(t *testing.T) {
	var calls atomic.Int64
	var lastZone atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var in struct {
			Input map[string]any `json:"input"`
		}
		json.NewDecoder(r.Body).Decode(&in)
		lastZone.Store(fmt.Sprint(in.Input["zone"]))
		fmt.Fprint(w, `{"result":{"ok":true}}`)
	}))
	defer srv.Close()
	root := writeSkills(t, "", map[string]string{"astro/SKILL.md": "---\nname: astro\ndescription: charts\n---\nuse chart", "astro/tools/tools.yaml": fmt.Sprintf(chartTools, srv.URL)})
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	a := agentOver(t, root, &fakeModel{}, func(c *Config) { c.Now = func() time.Time { return now } })
	run := func(args string) (string, error) {
		res, err := a.ExecuteTool(context.Background(), "u1", "astro", "chart", json.RawMessage(args), func(Event) error { return nil })
		return string(res), err
	}
	refused := []struct{ args, want string }{
		{`{"birth":"2030-01-01T08:00:00+08:00"}`, "birth 2030-01-01T08:00:00+08:00 is in the future"},
		{`{"birth":"yesterday"}`, "is not a date-time"},
		{`{"birth":"1990-05-01T08:00","number":10}`, "number 10 is above the maximum 9"},
		{`{"birth":"1990-05-01T08:00","number":0}`, "number 0 is below the minimum 1"},
		{`{"birth":"1990-05-01T08:00","number":2.5}`, "number must be integer"},
		{`{"birth":"1990-05-01T08:00","gender":"x"}`, "gender x is not one of male, female"},
		{`{"birth":"1990-05-01T08:00","code":"abc"}`, `code "abc" does not match the pattern`},
	}
	for _, r := range refused {
		_, err := run(r.args)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: err %v, want %q", r.args, err, r.want)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("the plugin ran %d times for refused arguments", n)
	}
	if _, err := run(`{"birth":"1990-05-01T08:00:00+08:00","gender":"female","number":9,"code":"CN"}`); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || lastZone.Load() != "Asia/Shanghai" {
		t.Fatalf("calls %d, zone %v (the default should fill it)", calls.Load(), lastZone.Load())
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	for _, tool := range a.Tools("astro") {
		if tool.Name == "chart" {
			json.Unmarshal(tool.Parameters, &schema)
		}
	}
	p := schema.Properties
	if p["birth"]["format"] != "date-time" || !strings.Contains(fmt.Sprint(p["birth"]["description"]), "not in the future") ||
		p["number"]["minimum"] != 1.0 || p["number"]["maximum"] != 9.0 || len(p["gender"]["enum"].([]any)) != 2 ||
		p["code"]["pattern"] != "^[A-Z]{2}$" || p["zone"]["default"] != "Asia/Shanghai" {
		t.Fatalf("function schema: %v", p)
	}
}
