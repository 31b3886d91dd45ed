package skills

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"time"
)

// Formats a Field may declare.
var Formats = []string{"date", "date-time", "time", "email", "uri"}

// JSONType maps a declared type (int, float, bool, list, map …) to its JSON
// Schema type.
func JSONType(t string) string {
	switch strings.ToLower(t) {
	case "int", "integer":
		return "integer"
	case "float", "number", "double":
		return "number"
	case "bool", "boolean":
		return "boolean"
	case "array", "list":
		return "array"
	case "object", "map", "dict":
		return "object"
	}
	return "string"
}

// CheckDecl reports what is wrong with the field's constraints themselves:
// a pattern that does not compile, an unknown format, minimum above
// maximum, bounds or a format on a type they do not apply to, a default
// that breaks the field's own constraints.
func (f Field) CheckDecl() error {
	jt := JSONType(f.Type)
	var errs []string
	if (f.Minimum != nil || f.Maximum != nil) && jt != "integer" && jt != "number" {
		errs = append(errs, fmt.Sprintf("minimum and maximum apply to numbers, not to type %s", f.Type))
	}
	if f.Minimum != nil && f.Maximum != nil && *f.Minimum > *f.Maximum {
		errs = append(errs, fmt.Sprintf("minimum %g is above maximum %g", *f.Minimum, *f.Maximum))
	}
	if f.Pattern != "" {
		if jt != "string" {
			errs = append(errs, fmt.Sprintf("pattern applies to strings, not to type %s", f.Type))
		} else if _, err := regexp.Compile(f.Pattern); err != nil {
			errs = append(errs, fmt.Sprintf("pattern %q does not compile: %v", f.Pattern, err))
		}
	}
	if f.Format != "" {
		known := false
		for _, x := range Formats {
			known = known || x == f.Format
		}
		switch {
		case !known:
			errs = append(errs, fmt.Sprintf("format %q is not one of %s", f.Format, strings.Join(Formats, ", ")))
		case jt != "string":
			errs = append(errs, fmt.Sprintf("format applies to strings, not to type %s", f.Type))
		}
	}
	if f.NotFuture && f.Format != "date" && f.Format != "date-time" {
		errs = append(errs, "not_future needs format date or date-time")
	}
	if len(errs) == 0 && f.Default != nil {
		// A default in the past is fine whatever now is: check it at a
		// fixed late time so not_future does not depend on the day.
		if err := f.Check(f.Default, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			errs = append(errs, fmt.Sprintf("default %v: %v", f.Default, err))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// Check reports why v (a decoded JSON value) breaks the field's type or
// constraints; now is the time not_future compares with.
func (f Field) Check(v any, now time.Time) error {
	jt := JSONType(f.Type)
	ok := true
	switch jt {
	case "integer":
		n, isNum := v.(float64)
		if i, isInt := v.(int); isInt {
			n, isNum = float64(i), true
		}
		ok = isNum && n == float64(int64(n))
	case "number":
		_, ok = number(v)
	case "boolean":
		_, ok = v.(bool)
	case "array":
		_, ok = v.([]any)
	case "object":
		_, ok = v.(map[string]any)
	case "string":
		_, ok = v.(string)
	}
	if !ok {
		return fmt.Errorf("must be %s", jt)
	}
	if len(f.Enum) > 0 {
		in := false
		for _, e := range f.Enum {
			in = in || sameValue(e, v)
		}
		if !in {
			var vals []string
			for _, e := range f.Enum {
				vals = append(vals, fmt.Sprint(e))
			}
			return fmt.Errorf("%v is not one of %s", v, strings.Join(vals, ", "))
		}
	}
	if n, isNum := number(v); isNum {
		if f.Minimum != nil && n < *f.Minimum {
			return fmt.Errorf("%v is below the minimum %g", v, *f.Minimum)
		}
		if f.Maximum != nil && n > *f.Maximum {
			return fmt.Errorf("%v is above the maximum %g", v, *f.Maximum)
		}
	}
	s, isStr := v.(string)
	if !isStr {
		return nil
	}
	if f.Pattern != "" {
		re, err := regexp.Compile(f.Pattern)
		if err != nil {
			return fmt.Errorf("the declared pattern does not compile: %v", err)
		}
		if !re.MatchString(s) {
			return fmt.Errorf("%q does not match the pattern %s", s, f.Pattern)
		}
	}
	switch f.Format {
	case "date", "date-time":
		t, err := parseTime(f.Format, s)
		if err != nil {
			return err
		}
		if f.NotFuture && t.After(now) {
			return fmt.Errorf("%s is in the future (now is %s)", s, now.UTC().Format(time.RFC3339))
		}
	case "time":
		if _, err := time.Parse("15:04", s); err != nil {
			if _, err := time.Parse("15:04:05", s); err != nil {
				return fmt.Errorf("%q is not a time of day such as 08:30", s)
			}
		}
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return fmt.Errorf("%q is not an email address", s)
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return fmt.Errorf("%q is not an absolute URI", s)
		}
	}
	return nil
}

func parseTime(format, s string) (time.Time, error) {
	if format == "date" {
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return t, fmt.Errorf("%q is not a date such as 1990-05-01", s)
		}
		return t, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date-time such as 1990-05-01T08:30:00+08:00", s)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// sameValue compares a declared enum value (decoded from YAML) with a
// JSON one: numbers by value, the rest by their text.
func sameValue(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	if reflect.DeepEqual(a, b) {
		return true
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}
