package runtime

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/vibelife/vibe/skills"
)

// roleDraw is the role of a persisted random draw: the tool's result (the
// seed and the items drawn), stored with the turn that drew it.
const roleDraw = "draw"

// maxSeed bounds seeds to integers JSON numbers carry exactly (2^53).
const maxSeed = 1<<53 - 1

// newSeed returns a fresh turn seed.
func newSeed() int64 {
	var b [8]byte
	if _, err := crand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return int64(binary.LittleEndian.Uint64(b[:]) & maxSeed)
}

// splitmix64 is the SplitMix64 generator's step: the draws depend on this
// function alone, so a recorded seed gives the same draws in every version.
func splitmix64(x *uint64) uint64 {
	*x += 0x9E3779B97F4A7C15
	z := *x
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// drawSeed is the seed of the n-th tool call of a turn seeded with turn.
func drawSeed(turn int64, n int) int64 {
	x := uint64(turn) ^ uint64(n)*0xD1B54A32D192ED03
	return int64(splitmix64(&x) & maxSeed)
}

// below returns a uniform integer in [0, n) (rejection sampling, no bias).
func below(x *uint64, n int) int {
	lim := ^uint64(0) - ^uint64(0)%uint64(n)
	for {
		if v := splitmix64(x); v < lim {
			return int(v % uint64(n))
		}
	}
}

// Drawn is one item of a draw.
type Drawn struct {
	Item     any  `json:"item"`
	Reversed bool `json:"reversed,omitempty"`
}

// drawItems draws count of items with seed: without repeat a partial
// Fisher-Yates shuffle, with repeat independent picks; with reversed each
// item drawn is upright or reversed.
func drawItems(items []any, count int, repeat, reversed bool, seed int64) []Drawn {
	x := uint64(seed)
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	out := make([]Drawn, 0, count)
	for i := 0; i < count; i++ {
		var k int
		if repeat {
			k = below(&x, len(items))
		} else {
			j := i + below(&x, len(items)-i)
			idx[i], idx[j] = idx[j], idx[i]
			k = idx[i]
		}
		d := Drawn{Item: items[k]}
		if reversed {
			d.Reversed = below(&x, 2) == 1
		}
		out = append(out, d)
	}
	return out
}

type (
	callSeqKey struct{}
	seedKey    struct{}
)

// WithSeed returns ctx carrying the seed ExecuteTool draws with (a random
// tool's result gives it as turn_seed, so the same call draws the same).
func WithSeed(ctx context.Context, seed int64) context.Context {
	return context.WithValue(ctx, seedKey{}, seed)
}

// withCallSeq marks ctx with the call's place among the turn's tool calls,
// from which a random tool derives its seed.
func withCallSeq(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, callSeqKey{}, n)
}

// randomTool draws for a random tool: the seed is derived from the turn's
// seed and the call's place in the turn, so replaying the turn with the
// recorded turn_seed draws the same items; the result, with both seeds, is
// stored with the turn.
func (a *Agent) randomTool(ctx context.Context, t *turn, sk *skills.Skill, tool skills.Tool, args map[string]any) (json.RawMessage, error) {
	items, err := tool.Draw.Load(sk.FS())
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("the draw has no items: list them under draw.items in tools/tools.yaml")
	}
	count := max(tool.Draw.Count, 1)
	if n, ok := args["count"].(float64); ok && n >= 1 {
		count = int(n)
	}
	if !tool.Draw.Repeat && count > len(items) {
		return nil, fmt.Errorf("cannot draw %d of %d items without repeat: ask for at most %d", count, len(items), len(items))
	}
	if count > 1000 {
		return nil, fmt.Errorf("count %d is too many: at most 1000 items a draw", count)
	}
	seq, _ := ctx.Value(callSeqKey{}).(int)
	turnSeed := t.turnSeed()
	seed := drawSeed(turnSeed, seq)
	res := map[string]any{
		"tool": tool.Name, "seed": seed, "turn_seed": turnSeed, "call": seq,
		"draws": drawItems(items, count, tool.Draw.Repeat, tool.Draw.Reversed, seed),
	}
	if len(args) > 0 {
		res["input"] = args
	}
	out, err := jsonOf(res)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.draws = append(t.draws, string(out))
	t.mu.Unlock()
	return out, nil
}

// collectTool shows a collect tool's form and ends the turn, as
// collect_info does; the form names the tool.
func (a *Agent) collectTool(t *turn, tool skills.Tool, args map[string]any) (json.RawMessage, error) {
	fields := make([]map[string]any, 0, len(tool.Form))
	for _, f := range tool.Form {
		m := map[string]any{"name": f.Name, "type": skills.JSONType(f.Type), "required": f.Required}
		if f.Description != "" {
			m["label"] = f.Description
		}
		if len(f.Enum) > 0 {
			m["enum"] = f.Enum
		}
		if f.Minimum != nil {
			m["minimum"] = *f.Minimum
		}
		if f.Maximum != nil {
			m["maximum"] = *f.Maximum
		}
		if f.Pattern != "" {
			m["pattern"] = f.Pattern
		}
		if f.Format != "" {
			m["format"] = f.Format
		}
		if f.Default != nil {
			m["default"] = f.Default
		}
		fields = append(fields, m)
	}
	form := map[string]any{"tool": tool.Name, "fields": fields}
	// The prompt shown is the model's reason for asking, else the tool's
	// own prompt; never its description, which is written for the model.
	if r := str(args, "reason"); r != "" {
		form["reason"] = r
	} else if tool.Prompt != "" {
		form["reason"] = tool.Prompt
	}
	raw, err := jsonOf(form)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.formSent = true
	t.mu.Unlock()
	if err := t.send(Event{Type: EventForm, Form: raw}); err != nil {
		return nil, err
	}
	return jsonOf(map[string]any{"status": "waiting_for_user", "form": json.RawMessage(raw)})
}

// retrieveTool searches the skill's knowledge, within the tool's sources
// when it names some.
func (a *Agent) retrieveTool(ctx context.Context, sk *skills.Skill, tool skills.Tool, args map[string]any) (json.RawMessage, error) {
	q := strings.TrimSpace(str(args, "query"))
	if q == "" {
		return nil, errors.New("query is required: the text to search for")
	}
	k := intArg(args, "k", 5)
	want := k
	if len(tool.Sources) > 0 {
		want = min(k*8, 100) // filtered below: ask for more
	}
	hits, err := a.search(ctx, sk.Name, q, want)
	if err != nil {
		return nil, err
	}
	out := make([]Passage, 0, k)
	for _, p := range hits {
		if len(out) == k {
			break
		}
		if inSources(tool.Sources, p) {
			out = append(out, p)
		}
	}
	res := map[string]any{"skill": sk.Name, "tool": tool.Name, "passages": out}
	if len(tool.Sources) > 0 {
		res["sources"] = tool.Sources
	}
	return jsonOf(res)
}

// inSources reports whether a passage is in one of the sources: its source
// path or document name equal to one, ending in /one, or matching it as a
// glob (books/*.md). No sources: every passage.
func inSources(sources []string, p Passage) bool {
	if len(sources) == 0 {
		return true
	}
	for _, s := range sources {
		for _, have := range []string{p.Source, p.Doc} {
			if have == "" {
				continue
			}
			if have == s || strings.HasSuffix(have, "/"+s) {
				return true
			}
			if ok, _ := path.Match(s, have); ok {
				return true
			}
		}
	}
	return false
}

// flowState is a flow tool's progress, kept in the user's skill data
// (skill_data.<skill>.flows.<tool>) so it survives restarts and is shared
// by every replica.
type flowState struct {
	Step    string         `json:"step"`
	Answers map[string]any `json:"answers"`
	Done    bool           `json:"done"`
}

// flowTool runs a flow tool: action start (re)starts it at the first step,
// answer records the answer to the current step (checked against the step's
// field) and moves on, status reports where it stands. Every result names
// the current step's prompt and field, or done with the answers.
func (a *Agent) flowTool(ctx context.Context, t *turn, sk *skills.Skill, tool skills.Tool, args map[string]any) (json.RawMessage, error) {
	action := str(args, "action")
	if action == "" {
		action = "status"
	}
	// The state is read, advanced and written back as one atomic update of
	// the profile (knowledge.MemoryStore.UpdateProfile), so two replicas
	// answering the same flow at once cannot lose a step.
	index := func(id string) int {
		for i, s := range tool.Steps {
			if s.ID == id {
				return i
			}
		}
		return -1
	}
	var st flowState
	var early json.RawMessage
	update := func(raw json.RawMessage) (json.RawMessage, error) {
		m, err := profileObject(t.userID, raw)
		if err != nil {
			return nil, err
		}
		st = flowState{}
		have := false
		if v, ok := lookup(m, "skill_data."+sk.Name+".flows."+tool.Name); ok {
			b, _ := json.Marshal(v)
			have = json.Unmarshal(b, &st) == nil && st.Step != ""
		}
		if have && !st.Done && index(st.Step) < 0 {
			// The declaration changed under a flow in progress: start again.
			have = false
		}
		changed := false
		switch action {
		case "start":
			st, changed = flowState{Step: tool.Steps[0].ID, Answers: map[string]any{}}, true
		case "answer":
			if !have {
				return nil, fmt.Errorf("flow %s has not started: call it with {\"action\":\"start\"} first", tool.Name)
			}
			if st.Done {
				return nil, fmt.Errorf("flow %s is finished: call it with {\"action\":\"start\"} to begin again", tool.Name)
			}
			i := index(st.Step)
			step := tool.Steps[i]
			v, ok := args["answer"]
			if !ok || v == nil {
				return nil, fmt.Errorf("answer is required for step %s: %s", step.ID, step.Prompt)
			}
			f := step.Field
			if s, isStr := v.(string); isStr && skills.JSONType(f.Type) != "string" {
				// The model passes what the user typed; read numbers and
				// booleans out of the text.
				var x any
				if json.Unmarshal([]byte(strings.TrimSpace(s)), &x) == nil {
					v = x
				}
			}
			if err := f.Check(v, a.cfg.Now()); err != nil {
				return nil, fmt.Errorf("step %s: the answer %v: %v; ask the user again: %s", step.ID, v, err, step.Prompt)
			}
			if st.Answers == nil {
				st.Answers = map[string]any{}
			}
			st.Answers[fieldName(step)] = v
			next := skills.NextStep(tool.Steps, i, v)
			if next == skills.FlowEnd {
				st.Done = true
			} else {
				st.Step = next
			}
			changed = true
		case "status":
			if !have {
				early, err = jsonOf(map[string]any{"flow": tool.Name, "started": false, "hint": "call with {\"action\":\"start\"} to begin"})
				return raw, err
			}
		default:
			return nil, fmt.Errorf("action %q: use start, answer or status", action)
		}
		if !changed {
			return raw, nil
		}
		{
			sd, _ := m["skill_data"].(map[string]any)
			if sd == nil {
				sd = map[string]any{}
				m["skill_data"] = sd
			}
			cur, _ := sd[sk.Name].(map[string]any)
			if cur == nil {
				cur = map[string]any{}
				sd[sk.Name] = cur
			}
			flows, _ := cur["flows"].(map[string]any)
			if flows == nil {
				flows = map[string]any{}
				cur["flows"] = flows
			}
			flows[tool.Name] = st
			version := 0.0
			if meta, ok := cur["_meta"].(map[string]any); ok {
				version, _ = meta["version"].(float64)
			}
			cur["_meta"] = map[string]any{"version": version + 1, "updated_at": a.cfg.Now().UTC().Format("2006-01-02T15:04:05Z07:00")}
			return json.Marshal(m)
		}
	}
	if action == "status" {
		raw, err := a.cfg.Memory.Profile(ctx, t.userID)
		if err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
		if _, err := update(raw); err != nil {
			return nil, err
		}
	} else {
		if _, err := a.cfg.Memory.UpdateProfile(ctx, t.userID, update); err != nil {
			return nil, err
		}
		t.mu.Lock()
		t.userOK = false
		t.mu.Unlock()
	}
	if early != nil {
		return early, nil
	}
	res := map[string]any{"flow": tool.Name, "started": true, "done": st.Done, "answers": st.Answers}
	if !st.Done {
		step := tool.Steps[index(st.Step)]
		f := step.Field
		f.Name = fieldName(step)
		res["step"] = step.ID
		res["prompt"] = step.Prompt
		res["field"] = f
		res["position"] = fmt.Sprintf("%d/%d", index(st.Step)+1, len(tool.Steps))
	}
	return jsonOf(res)
}

func fieldName(s skills.FlowStep) string {
	if s.Field.Name != "" {
		return s.Field.Name
	}
	return s.ID
}

// toolSchema is the function schema the model gets for a skill tool: the
// declared parameters, or for the types whose arguments the runtime
// defines, those.
func toolSchema(t skills.Tool) json.RawMessage {
	switch t.Type {
	case skills.TypeFlow:
		return json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["start","answer","status"],"description":"start (or restart) the flow, answer its current step, or read where it stands"},"answer":{"description":"the user's answer to the current step (with action answer)"}},"required":["action"],"additionalProperties":false}`)
	case skills.TypeRetrieve:
		if len(t.Parameters) == 0 {
			return json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to search for"},"k":{"type":"integer","minimum":1,"maximum":20}},"required":["query"],"additionalProperties":false}`)
		}
	case skills.TypeCollect:
		if len(t.Parameters) == 0 {
			return json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string","description":"why the form is shown, in the user's language"}},"additionalProperties":false}`)
		}
	}
	return schemaOf(fieldsOf(t))
}

// argFields are the fields a skill tool's arguments are validated against
// (nil: the runtime checks them itself).
func argFields(t skills.Tool) ([]skills.Field, bool) {
	switch t.Type {
	case skills.TypeFlow:
		return nil, false
	case skills.TypeRetrieve:
		if len(t.Parameters) == 0 {
			return []skills.Field{{Name: "query", Type: "string", Required: true}, {Name: "k", Type: "integer"}}, true
		}
	case skills.TypeCollect:
		if len(t.Parameters) == 0 {
			return []skills.Field{{Name: "reason", Type: "string"}}, true
		}
	}
	return fieldsOf(t), true
}

// passagesOf reads the passages of a retrieve result (for citations).
func passagesOf(res json.RawMessage) []Passage {
	var out struct {
		Passages []Passage `json:"passages"`
	}
	if json.Unmarshal(res, &out) != nil {
		return nil
	}
	return out.Passages
}
