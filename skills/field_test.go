package skills

import (
	"strings"
	"testing"
	"time"
)

func f64(v float64) *float64 { return &v }

func TestFieldCheckDecl(t *testing.T) {
	bad := []struct {
		f    Field
		want string
	}{
		{Field{Name: "n", Type: "integer", Minimum: f64(9), Maximum: f64(1)}, "minimum 9 is above maximum 1"},
		{Field{Name: "s", Type: "string", Minimum: f64(1)}, "apply to numbers"},
		{Field{Name: "s", Type: "string", Pattern: "("}, "does not compile"},
		{Field{Name: "s", Type: "string", Format: "colour"}, `format "colour" is not one of`},
		{Field{Name: "n", Type: "number", Format: "date"}, "format applies to strings"},
		{Field{Name: "s", Type: "string", NotFuture: true}, "not_future needs format date or date-time"},
		{Field{Name: "n", Type: "integer", Maximum: f64(9), Default: 12}, "default 12: 12 is above the maximum 9"},
		{Field{Name: "g", Type: "string", Enum: []any{"a", "b"}, Default: "c"}, "default c: c is not one of a, b"},
	}
	for _, b := range bad {
		if err := b.f.CheckDecl(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%+v: %v, want %q", b.f, err, b.want)
		}
	}
	good := Field{Name: "birth", Type: "string", Format: "date", NotFuture: true, Default: "2000-01-01"}
	if err := good.CheckDecl(); err != nil {
		t.Fatal(err)
	}
}

func TestFieldCheck(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		f    Field
		v    any
		want string // "" for accepted
	}{
		{Field{Type: "string", Format: "date", NotFuture: true}, "2025-12-31", ""},
		{Field{Type: "string", Format: "date", NotFuture: true}, "2026-01-02", "in the future"},
		{Field{Type: "string", Format: "date-time"}, "1990-05-01 08:30", ""},
		{Field{Type: "string", Format: "time"}, "25:00", "not a time of day"},
		{Field{Type: "string", Format: "email"}, "a@b.org", ""},
		{Field{Type: "string", Format: "email"}, "not mail", "not an email"},
		{Field{Type: "string", Format: "uri"}, "https://example.org/x", ""},
		{Field{Type: "string", Format: "uri"}, "example", "not an absolute URI"},
		{Field{Type: "integer", Enum: []any{1, 2, 3}}, 2.0, ""},
		{Field{Type: "integer", Enum: []any{1, 2, 3}}, 4.0, "not one of 1, 2, 3"},
		{Field{Type: "number", Minimum: f64(0.5)}, 0.4, "below the minimum"},
		{Field{Type: "boolean"}, "yes", "must be boolean"},
	}
	for _, c := range cases {
		err := c.f.Check(c.v, now)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v %v: %v, want %q", c.f, c.v, err, c.want)
		}
	}
}
