package knowledge

import (
	"encoding/json"
	"testing"
)

// A tiered rule serialises as the rule's own fields with "tier" beside them
// (get_rules results, reports), never under Go's field name.
func TestTieredRuleJSON(t *testing.T) {
	r := TieredRule{Tier: Tier2, Rule: Rule{ID: "R001", Condition: "c", Conclusion: "k", Source: "s", Evidence: []Evidence{{Chunk: "c1", Quote: "q"}}}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["tier"] != Tier2 || m["id"] != "R001" || m["conclusion"] != "k" {
		t.Errorf("got %s, want tier, id and conclusion at the top level", b)
	}
	if _, ok := m["Tier"]; ok {
		t.Errorf("got %s: the tier is under the Go field name", b)
	}
	var back TieredRule
	if err := json.Unmarshal(b, &back); err != nil || back.Tier != Tier2 || back.ID != "R001" {
		t.Errorf("round trip = %+v, %v", back, err)
	}
}
