package schema

import (
	"embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
	"gopkg.in/yaml.v3"
)

//go:embed *.schema.json
var files embed.FS

// Kinds of documents with a schema.
const (
	SOP      = "sop"
	Patterns = "patterns"
	Rules    = "rules"
	Tools    = "tools"
	Eval     = "eval"
)

// ErrUnknownKind is returned for a kind that has no schema.
var ErrUnknownKind = errors.New("unknown schema kind")

// Kinds lists the kinds with a schema, in a stable order.
func Kinds() []string { return []string{SOP, Patterns, Rules, Tools, Eval} }

// JSON returns the JSON Schema document for kind.
func JSON(kind string) ([]byte, error) {
	b, err := files.ReadFile(kind + ".schema.json")
	if err != nil {
		return nil, fmt.Errorf("schema %q: %w (want one of %s)", kind, ErrUnknownKind, strings.Join(Kinds(), ", "))
	}
	return b, nil
}

// Problem is one way a document breaks its schema.
type Problem struct {
	// Path is the JSON pointer of the offending value, e.g.
	// "/rules/tier1_must_know/0/priority" ("" for the whole document).
	Path string `json:"path"`
	// Line and Column locate the value in the YAML file, 1-based.
	Line   int `json:"line"`
	Column int `json:"column"`
	// Message says what is wrong.
	Message string `json:"message"`
}

func (p Problem) String() string {
	path := p.Path
	if path == "" {
		path = "/"
	}
	return fmt.Sprintf("%d:%d: %s: %s", p.Line, p.Column, path, p.Message)
}

type compiled struct {
	once sync.Once
	m    map[string]*jsonschema.Schema
	err  error
}

// compiledSchemas is immutable once built: the embedded files never change,
// so sharing the compiled schemas is safe.
var cache compiled

func schemaFor(kind string) (*jsonschema.Schema, error) {
	cache.once.Do(func() {
		cache.m = map[string]*jsonschema.Schema{}
		for _, k := range Kinds() {
			b, _ := files.ReadFile(k + ".schema.json")
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
			if err != nil {
				cache.err = fmt.Errorf("schema %s: %w", k, err)
				return
			}
			c := jsonschema.NewCompiler()
			url := k + ".schema.json"
			if err := c.AddResource(url, doc); err != nil {
				cache.err = fmt.Errorf("schema %s: %w", k, err)
				return
			}
			s, err := c.Compile(url)
			if err != nil {
				cache.err = fmt.Errorf("schema %s: %w", k, err)
				return
			}
			cache.m[k] = s
		}
	})
	if cache.err != nil {
		return nil, cache.err
	}
	s, ok := cache.m[kind]
	if !ok {
		return nil, fmt.Errorf("schema %q: %w (want one of %s)", kind, ErrUnknownKind, strings.Join(Kinds(), ", "))
	}
	return s, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// ValidateYAML validates a YAML document of the given kind ("sop",
// "patterns", "rules" or "tools"). Problems are sorted by position. A YAML
// syntax error is reported as a Problem too; the error is only for an
// unknown kind.
func ValidateYAML(kind string, data []byte) ([]Problem, error) {
	sch, err := schemaFor(kind)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		p := Problem{Line: 1, Column: 1, Message: "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			p.Line, _ = strconv.Atoi(m[1])
		}
		return []Problem{p}, nil
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return []Problem{{Line: 1, Column: 1, Message: "empty document: want a mapping with the top-level key " + topKey(kind)}}, nil
		}
		doc = doc.Content[0]
	}
	v, err := toValue(doc)
	if err != nil {
		return []Problem{{Line: doc.Line, Column: doc.Column, Message: err.Error()}}, nil
	}
	verr := sch.Validate(v)
	if verr == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(verr, &ve) {
		return []Problem{{Line: 1, Column: 1, Message: verr.Error()}}, nil
	}
	printer := message.NewPrinter(language.English)
	var out []Problem
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			n := locate(doc, e.InstanceLocation)
			p := Problem{Path: pointer(e.InstanceLocation), Line: n.Line, Column: n.Column, Message: e.ErrorKind.LocalizedString(printer)}
			key := p.String()
			if !seen[key] {
				seen[key] = true
				out = append(out, p)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out, nil
}

func topKey(kind string) string {
	switch kind {
	case SOP:
		return "sop"
	case Patterns:
		return "patterns"
	case Rules:
		return "rules"
	case Eval:
		return "cases"
	}
	return "tools"
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		s = strings.ReplaceAll(s, "~", "~0")
		b.WriteString(strings.ReplaceAll(s, "/", "~1"))
	}
	return b.String()
}

// locate finds the node at loc, or the deepest node on the way.
func locate(n *yaml.Node, loc []string) *yaml.Node {
	for _, tok := range loc {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// toValue converts a YAML node to the JSON data model the validator expects.
func toValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("unresolved alias %q", n.Value)
		}
		return toValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: mapping keys must be plain strings", k.Line)
			}
			v, err := toValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := toValue(c)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		switch x := v.(type) {
		case int:
			return float64(x), nil
		case int64:
			return float64(x), nil
		case uint64:
			return float64(x), nil
		}
		return v, nil
	}
	return nil, nil
}
