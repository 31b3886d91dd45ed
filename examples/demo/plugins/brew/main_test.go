package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The figures come from the demo corpus (examples/demo).
func TestCompute(t *testing.T) {
	tests := []struct {
		in                  Input
		grams               float64
		temp                int
		steeps              []int
		confidence          float64
		rinse               int
		wantMethodOrMeasure string
	}{
		// green-tea.md: 3 g per 150 ml, 80 °C, two minutes, three top-ups.
		{Input{Tea: "green", VesselML: 150}, 3, 80, []int{120, 120, 120, 120}, 0.9, 0, "glass"},
		{Input{Tea: "绿茶", VesselML: 300, Leaf: "buds"}, 6, 78, []int{120, 120, 120, 120}, 0.9, 0, "glass"},
		// black-tea.docx: 2.5 g per 250 ml; broken 95 °C 3 min, whole 100 °C 5 min; milk one minute longer.
		{Input{Tea: "black", VesselML: 250, Leaf: "broken"}, 2.5, 95, []int{180}, 0.9, 0, "western"},
		{Input{Tea: "black", VesselML: 500, Leaf: "whole", Milk: true}, 5, 100, []int{360}, 0.9, 0, "western"},
		// oolong.html: rinse five seconds, twenty seconds at 95 °C, ten more each time; no gram ratio.
		{Input{Tea: "oolong", VesselML: 100, Infusions: 3}, 5, 95, []int{20, 30, 40}, 0.6, 5, "one quarter"},
		{Input{Tea: "oolong", VesselML: 100, Leaf: "strips", Infusions: 1}, 7, 95, []int{20}, 0.6, 5, "one half"},
		// puer-gbk.txt: 7 g per 100 ml, rinse five seconds, ten seconds then five more each time.
		{Input{Tea: "普洱", VesselML: 100, Infusions: 4}, 7, 100, []int{10, 15, 20, 25}, 0.9, 5, "润茶"},
		// white-tea-utf16.txt: silver needle below 90 °C; aged shou mei 5 g in 500 ml, simmered three minutes.
		{Input{Tea: "white", VesselML: 200, Infusions: 2}, 4, 85, []int{60, 90}, 0.6, 0, "九十度以下"},
		{Input{Tea: "白茶", VesselML: 500, Leaf: "shou_mei"}, 5, 100, []int{180}, 0.9, 0, "煮饮"},
	}
	for _, tt := range tests {
		out, err := Compute(tt.in)
		if err != nil {
			t.Fatalf("%+v: %v", tt.in, err)
		}
		r := out.Result
		if r.Grams != tt.grams || r.WaterTempC != tt.temp || r.RinseS != tt.rinse || out.Confidence != tt.confidence {
			t.Errorf("%+v: grams %v temp %d rinse %d confidence %v", tt.in, r.Grams, r.WaterTempC, r.RinseS, out.Confidence)
		}
		if got, _ := json.Marshal(r.SteepsS); string(got) != mustJSON(tt.steeps) {
			t.Errorf("%+v: steeps %s, want %s", tt.in, got, mustJSON(tt.steeps))
		}
		if !strings.Contains(r.Method+r.LeafMeasure, tt.wantMethodOrMeasure) {
			t.Errorf("%+v: method %q measure %q", tt.in, r.Method, r.LeafMeasure)
		}
		if srcs, _ := out.Meta["sources"].([]string); len(srcs) == 0 {
			t.Errorf("%+v: no sources in meta", tt.in)
		}
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestBadInput(t *testing.T) {
	tests := []struct{ stdin, want string }{
		{`{"tool":"calc_brew","input":{"tea":"coffee","vessel_ml":200}}`, `tea "coffee" is not known`},
		{`{"tool":"calc_brew","input":{"tea":"green","vessel_ml":5}}`, "vessel_ml 5 is outside 30..3000"},
		{`{"tool":"calc_brew","input":{"tea":"green","vessel_ml":200,"leaf":"balls"}}`, `leaf "balls" does not fit green tea: use one of buds, mature`},
		{`{"tool":"calc_brew","input":{"tea":"green","vessel_ml":200,"milk":true}}`, "milk applies to black tea only"},
		{`{"tool":"calc_brew","input":{"tea":"green","vessel_ml":200,"sugar":1}}`, `unknown field "sugar"`},
		{`not json`, "stdin is not a JSON request"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		if code := run(nil, strings.NewReader(tt.stdin), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), tt.want) || out.Len() != 0 {
			t.Errorf("%s: exit %d, stderr %q, stdout %q", tt.stdin, code, errOut.String(), out.String())
		}
	}
}

func TestProtocol(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(nil, strings.NewReader(`{"tool":"calc_brew","input":{"tea":"green","vessel_ml":300}}`), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var got struct {
		Result     map[string]any `json:"result"`
		Features   map[string]any `json:"features"`
		Confidence float64        `json:"confidence"`
		Meta       map[string]any `json:"meta"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Result["grams"] != 6.0 || got.Confidence != 0.9 || got.Features["grams_per_100ml"] != 2.0 || got.Meta["plugin"] != "brew-calc" {
		t.Fatalf("output = %s", out.String())
	}
	out.Reset()
	if code := run([]string{"--describe"}, nil, &out, &errOut); code != 0 || !json.Valid(out.Bytes()) {
		t.Fatalf("--describe: %d %s", code, out.String())
	}
}
