// Command brew-calc is the demo theme's compute plugin: from a tea type and a
// vessel size it works out the grams of leaves, the water temperature and the
// steep times, using the figures of the demo corpus (examples/demo).
//
// It speaks the vibe plugin protocol (see package skills): a JSON request
// {"tool": "calc_brew", "input": {...}} on stdin, the unified result
// {"result", "features", "confidence", "meta"} on stdout; a bad input exits 2
// with the reason on stderr. --describe prints the input and output schema.
//
//	echo '{"tool":"calc_brew","input":{"tea":"green","vessel_ml":300}}' | brew-calc
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

// Input is what the runtime sends as "input".
type Input struct {
	Tea      string `json:"tea"`
	VesselML int    `json:"vessel_ml"`
	// Leaf is the style within the tea: green buds|mature, black
	// broken|whole, oolong balls|strips, white silver_needle|shou_mei.
	Leaf      string `json:"leaf,omitempty"`
	Milk      bool   `json:"milk,omitempty"`
	Infusions int    `json:"infusions,omitempty"`
}

// Result is the computed brew.
type Result struct {
	Tea         string   `json:"tea"`
	Leaf        string   `json:"leaf,omitempty"`
	VesselML    int      `json:"vessel_ml"`
	Grams       float64  `json:"grams"`
	WaterTempC  int      `json:"water_temp_c"`
	RinseS      int      `json:"rinse_s,omitempty"`
	SteepsS     []int    `json:"steeps_s"`
	Method      string   `json:"method"`
	Cautions    []string `json:"cautions,omitempty"`
	LeafMeasure string   `json:"leaf_measure,omitempty"`
}

// Output is the unified plugin output.
type Output struct {
	Result     Result         `json:"result"`
	Features   map[string]any `json:"features"`
	Confidence float64        `json:"confidence"`
	Meta       map[string]any `json:"meta"`
}

// profile is one tea (and leaf style) as the demo corpus describes it.
type profile struct {
	gramsPer100 float64 // grams of leaves per 100 ml
	ratioSource bool    // the ratio is stated in the sources
	tempC       int
	tempRange   [2]int
	rinseS      int
	firstS      int
	addS        int // seconds added per following infusion
	infusions   int
	method      string
	leafMeasure string
	cautions    []string
	sources     []string
}

var aliases = map[string]string{
	"green": "green", "绿茶": "green", "black": "black", "红茶": "black",
	"oolong": "oolong", "乌龙": "oolong", "乌龙茶": "oolong",
	"puer": "puer", "pu'er": "puer", "pu-erh": "puer", "普洱": "puer", "普洱茶": "puer",
	"white": "white", "白茶": "white",
}

// leaves lists each tea's leaf styles; the first is the default.
var leaves = map[string][]string{
	"green":  {"", "buds", "mature"},
	"black":  {"", "broken", "whole"},
	"oolong": {"balls", "strips"},
	"puer":   {""},
	"white":  {"silver_needle", "shou_mei"},
}

func lookup(tea, leaf string) (profile, error) {
	switch tea + "/" + leaf {
	case "green/", "green/buds", "green/mature":
		p := profile{gramsPer100: 2, ratioSource: true, tempC: 80, tempRange: [2]int{75, 85}, firstS: 120, infusions: 4,
			method:   "brew in a warmed glass: pour the water down the side, wait two minutes, drink down to one third and top up; stop after the third top-up",
			cautions: []string{"never use water at a rolling boil", "if the cup tastes bitter, lower the temperature by five degrees before shortening the time"},
			sources:  []string{"Brewing Green Tea > Chapter 2. Temperature and Time"}}
		switch leaf {
		case "buds":
			p.tempC, p.tempRange = 78, [2]int{75, 80}
		case "mature":
			p.tempC, p.tempRange = 83, [2]int{80, 85}
		}
		return p, nil
	case "black/", "black/broken", "black/whole":
		p := profile{gramsPer100: 1, ratioSource: true, tempC: 100, tempRange: [2]int{95, 100}, firstS: 240, infusions: 1,
			method:   "western pot: warm the pot, pour freshly boiled water over the leaves, cover and steep, then strain all the tea into a second warmed pot",
			cautions: []string{"use freshly boiled water: reboiled water makes the cup dull"},
			sources:  []string{"Brewing Black Tea > Chapter 2. Method: the Western Pot", "Brewing Black Tea > Chapter 3. Rules and Patterns > 3.3 Steeping table"}}
		switch leaf {
		case "broken":
			p.tempC, p.firstS = 95, 180
		case "whole":
			p.tempC, p.firstS = 100, 300
		}
		return p, nil
	case "oolong/balls", "oolong/strips":
		p := profile{gramsPer100: 5, tempC: 95, tempRange: [2]int{95, 100}, rinseS: 5, firstS: 20, addS: 10, infusions: 6,
			method:      "gongfu: heat the pot and cups, rinse the leaves for five seconds and pour the rinse away, then short infusions, pouring out every drop each time",
			leafMeasure: "fill the pot one quarter full",
			cautions:    []string{"if the tea turns sour, the water was not hot enough"},
			sources:     []string{"Brewing Oolong > Chapter 1. Leaves and Vessels", "Brewing Oolong > Chapter 2. Method: Gongfu Brewing"}}
		if leaf == "strips" {
			p.gramsPer100, p.leafMeasure = 7, "fill the pot one half full"
		}
		return p, nil
	case "puer/":
		return profile{gramsPer100: 7, ratioSource: true, tempC: 100, tempRange: [2]int{100, 100}, rinseS: 5, firstS: 10, addS: 5, infusions: 8,
			method:   "温壶烫杯，润茶一至二次（五秒即出，弃之），第一泡十秒，其后每泡递增五秒，至茶味转淡为止 / warm the pot, rinse once or twice, then infusions growing by five seconds",
			cautions: []string{"厚壁之器：熟普宜紫砂壶，生普宜盖碗 / a thick-walled vessel", "生普苦涩过重：减茶缩时 / too bitter: fewer leaves, shorter steeps"},
			sources:  []string{"普洱茶冲泡要略 > 第三章 冲泡之法", "普洱茶冲泡要略 > 第一章 择器"}}, nil
	case "white/silver_needle":
		return profile{gramsPer100: 2, tempC: 85, tempRange: [2]int{80, 89}, firstS: 60, addS: 30, infusions: 4,
			method:   "白毫银针用九十度以下之水 / silver needle wants water below 90 °C",
			cautions: []string{"若表面生白霜而有霉味，切勿饮用 / white frost and a musty smell: do not drink"},
			sources:  []string{"白茶冲泡简要 > 一、白茶之性"}}, nil
	case "white/shou_mei":
		return profile{gramsPer100: 1, ratioSource: true, tempC: 100, tempRange: [2]int{100, 100}, firstS: 180, infusions: 1,
			method:   "煮饮：老白茶五克、水五百毫升，小火慢煮，水沸后再煮三分钟 / boil aged shou mei: simmer three minutes after the boil",
			cautions: []string{"若表面生白霜而有霉味，切勿饮用 / white frost and a musty smell: do not drink"},
			sources:  []string{"白茶冲泡简要 > 二、煮饮之法", "白茶冲泡简要 > 一、白茶之性"}}, nil
	}
	return profile{}, fmt.Errorf("leaf %q does not fit %s tea: use one of %s", leaf, tea, strings.Join(nonEmpty(leaves[tea]), ", "))
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Compute works out the brew for one input.
func Compute(in Input) (Output, error) {
	tea, ok := aliases[strings.ToLower(strings.TrimSpace(in.Tea))]
	if !ok {
		return Output{}, fmt.Errorf("tea %q is not known: use green, black, oolong, puer or white", in.Tea)
	}
	if in.VesselML < 30 || in.VesselML > 3000 {
		return Output{}, fmt.Errorf("vessel_ml %d is outside 30..3000 millilitres", in.VesselML)
	}
	if in.Infusions < 0 || in.Infusions > 20 {
		return Output{}, fmt.Errorf("infusions %d is outside 1..20", in.Infusions)
	}
	leaf := strings.ToLower(strings.TrimSpace(in.Leaf))
	if leaf == "" {
		leaf = leaves[tea][0]
	}
	p, err := lookup(tea, leaf)
	if err != nil {
		return Output{}, err
	}
	if in.Milk && tea != "black" {
		return Output{}, fmt.Errorf("milk applies to black tea only, not %s", tea)
	}
	first := p.firstS
	var notes []string
	if in.Milk {
		first += 60
		notes = append(notes, "with milk: one minute longer so the body carries through")
	}
	n := p.infusions
	if in.Infusions > 0 {
		n = in.Infusions
	}
	steeps := make([]int, n)
	for i := range steeps {
		steeps[i] = first + i*p.addS
	}
	grams := math.Round(p.gramsPer100*float64(in.VesselML)/10) / 10
	confidence := 0.9
	if !p.ratioSource {
		confidence = 0.6
		notes = append(notes, "the sources give no gram ratio for this tea: the grams are the calculator's default")
	}
	return Output{
		Result: Result{Tea: tea, Leaf: leaf, VesselML: in.VesselML, Grams: grams, WaterTempC: p.tempC, RinseS: p.rinseS,
			SteepsS: steeps, Method: p.method, Cautions: p.cautions, LeafMeasure: p.leafMeasure},
		Features: map[string]any{
			"grams_per_100ml":   p.gramsPer100,
			"temp_range_c":      p.tempRange,
			"ratio_from_source": p.ratioSource,
			"infusions":         n,
		},
		Confidence: confidence,
		Meta:       meta(p.sources, notes),
	}, nil
}

func meta(sources, notes []string) map[string]any {
	m := map[string]any{"plugin": "brew-calc", "version": "1", "sources": sources}
	if len(notes) > 0 {
		m["notes"] = notes
	}
	return m
}

// describe is the plugin's input and output schema (--describe).
const describe = `{
  "id": "brew-calc",
  "name": "Tea brew calculator",
  "input_schema": {
    "type": "object",
    "required": ["tea", "vessel_ml"],
    "properties": {
      "tea": {"type": "string", "enum": ["green", "black", "oolong", "puer", "white", "绿茶", "红茶", "乌龙", "普洱", "白茶"]},
      "vessel_ml": {"type": "integer", "minimum": 30, "maximum": 3000},
      "leaf": {"type": "string", "enum": ["buds", "mature", "broken", "whole", "balls", "strips", "silver_needle", "shou_mei"]},
      "milk": {"type": "boolean"},
      "infusions": {"type": "integer", "minimum": 1, "maximum": 20}
    }
  },
  "output_schema": {
    "type": "object",
    "required": ["result", "confidence"],
    "properties": {
      "result": {"type": "object", "required": ["tea", "vessel_ml", "grams", "water_temp_c", "steeps_s", "method"]},
      "features": {"type": "object"},
      "confidence": {"type": "number", "minimum": 0, "maximum": 1},
      "meta": {"type": "object"}
    }
  }
}
`

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "--describe" {
		fmt.Fprint(stdout, describe)
		return 0
	}
	var req struct {
		Tool  string          `json:"tool"`
		Input json.RawMessage `json:"input"`
	}
	dec := json.NewDecoder(io.LimitReader(stdin, 1<<20))
	if err := dec.Decode(&req); err != nil {
		fmt.Fprintf(stderr, "brew-calc: stdin is not a JSON request {\"tool\": ..., \"input\": {...}}: %v\n", err)
		return 2
	}
	var in Input
	d := json.NewDecoder(strings.NewReader(string(req.Input)))
	d.DisallowUnknownFields()
	if err := d.Decode(&in); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "brew-calc: input: %v\n", err)
		return 2
	}
	out, err := Compute(in)
	if err != nil {
		fmt.Fprintf(stderr, "brew-calc: %v\n", err)
		return 2
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(stderr, "brew-calc: %v\n", err)
		return 1
	}
	return 0
}

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
