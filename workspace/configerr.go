package workspace

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// explainConfig finds the first key of vibe.yaml (doc) that Config cannot
// take and says so in the user's terms: the key's dotted name, the value
// written and a valid example, never a Go type. It returns nil when it
// finds nothing (the caller then reports yaml's own error, cleaned).
func explainConfig(path string, doc *yaml.Node) error {
	if doc == nil || len(doc.Content) != 1 {
		return nil
	}
	def := reflect.ValueOf(DefaultConfig())
	return explainNode(path, doc.Content[0], def, nil)
}

func explainNode(path string, n *yaml.Node, v reflect.Value, prefix []string) error {
	if v.Kind() != reflect.Struct {
		return explainLeaf(path, n, v, prefix)
	}
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		where := "the top level"
		if len(prefix) > 0 {
			where = strings.Join(prefix, ".")
		}
		return fmt.Errorf("%s:%d: %s must be a mapping of keys (key: value on lines of their own), not %q; `vibe config --keys` lists every key", path, n.Line, where, n.Value)
	}
	t := v.Type()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		p := append(append([]string(nil), prefix...), k.Value)
		fi := -1
		var names []string
		for j := 0; j < t.NumField(); j++ {
			tag := strings.Split(t.Field(j).Tag.Get("yaml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			names = append(names, tag)
			if tag == k.Value {
				fi = j
			}
		}
		if fi < 0 {
			msg := fmt.Sprintf("%s:%d: unknown key %s", path, k.Line, strings.Join(p, "."))
			if near := nearestName(k.Value, names); near != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(append(append([]string(nil), prefix...), near), "."))
			}
			if len(prefix) == 0 {
				msg += fmt.Sprintf("; the sections are %s", strings.Join(names, ", "))
			} else {
				msg += fmt.Sprintf("; the keys of %s are %s", strings.Join(prefix, "."), strings.Join(names, ", "))
			}
			return fmt.Errorf("%s", msg)
		}
		if err := explainNode(path, val, v.Field(fi), p); err != nil {
			return err
		}
	}
	return nil
}

// explainLeaf checks one scalar value against the kind of its field, with
// the default value as the example.
func explainLeaf(path string, n *yaml.Node, v reflect.Value, p []string) error {
	key := strings.Join(p, ".")
	name := p[len(p)-1]
	bad := func(what, example string) error {
		shown := n.Value
		if n.Kind != yaml.ScalarNode {
			shown = "a " + map[yaml.Kind]string{yaml.SequenceNode: "list", yaml.MappingNode: "mapping"}[n.Kind]
			return fmt.Errorf("%s:%d: %s is %s, want %s; for example `%s: %s`", path, n.Line, key, shown, what, name, example)
		}
		return fmt.Errorf("%s:%d: %s: %q is not %s; for example `%s: %s`", path, n.Line, key, shown, what, name, example)
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	switch {
	case v.Type() == durationType:
		d := time.Duration(v.Int())
		if d == 0 {
			d = 30 * time.Second
		}
		if n.Kind != yaml.ScalarNode {
			return bad("a duration", shortDuration(d))
		}
		if _, err := time.ParseDuration(n.Value); err != nil {
			return bad("a duration (a number with a unit: ms, s, m or h)", shortDuration(d))
		}
	case v.Kind() == reflect.Int || v.Kind() == reflect.Int64:
		ex := v.Int()
		if ex == 0 {
			ex = 8
		}
		if n.Kind != yaml.ScalarNode {
			return bad("a whole number", strconv.FormatInt(ex, 10))
		}
		if _, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err != nil {
			return bad("a whole number", strconv.FormatInt(ex, 10))
		}
	case v.Kind() == reflect.Float64:
		ex := v.Float()
		if ex == 0 {
			ex = 0.5
		}
		if n.Kind != yaml.ScalarNode {
			return bad("a number", strconv.FormatFloat(ex, 'g', -1, 64))
		}
		if _, err := strconv.ParseFloat(n.Value, 64); err != nil {
			return bad("a number", strconv.FormatFloat(ex, 'g', -1, 64))
		}
	case v.Kind() == reflect.Bool:
		if n.Kind != yaml.ScalarNode {
			return bad("true or false", strconv.FormatBool(v.Bool()))
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			return bad("true or false", strconv.FormatBool(v.Bool()))
		}
	case v.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			ex := v.String()
			if ex == "" {
				ex = "text"
			}
			return bad("a single value", ex)
		}
	case v.Kind() == reflect.Map:
		if n.Kind != yaml.MappingNode {
			return bad("a mapping", "{name: {key: value}}")
		}
	case v.Kind() == reflect.Slice:
		if n.Kind == yaml.MappingNode {
			return bad("a list", "[a, b]")
		}
	}
	return nil
}

// shortDuration prints 2m rather than 2m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// nearestName is the name within edit distance 2 (or a prefix/suffix match)
// of s, or "".
func nearestName(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		d := EditDistance(s, n)
		if d < bestD || (d == bestD && best == "") {
			best, bestD = n, d
		}
	}
	if best != "" {
		return best
	}
	for _, n := range names {
		if len(s) >= 4 && (strings.HasSuffix(n, "_"+s) || strings.HasPrefix(n, s+"_")) {
			return n
		}
	}
	return ""
}

// EditDistance is the Levenshtein distance between a and b, in runes.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := prev[j-1]
			if ra[i-1] != rb[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

var goTypeRe = regexp.MustCompile(` (in|into) (type )?[\w.\[\]*]+`)

// cleanYAMLError drops the Go type names from a yaml decode error
// ("field x not found in type workspace.ServeConfig").
func cleanYAMLError(err error) string {
	s := goTypeRe.ReplaceAllString(err.Error(), "")
	return yamlTagRe.ReplaceAllStringFunc(s, func(tag string) string {
		if w, ok := yamlTagWords[tag]; ok {
			return w
		}
		return "a value"
	})
}

var (
	yamlTagRe    = regexp.MustCompile(`!!\w+`)
	yamlTagWords = map[string]string{"!!str": "text", "!!int": "a number", "!!float": "a number", "!!bool": "true or false", "!!seq": "a list", "!!map": "a mapping", "!!null": "nothing"}
)
