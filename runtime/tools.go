package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/skills"
)

// ErrToolUnavailable is returned for a skill tool whose skill is not active
// or an unknown tool.
var ErrToolUnavailable = errors.New("tool unavailable")

// coreTools are always available.
var coreTools = []llm.Tool{
	{Name: "use_skill", Description: "Activate one or several skills (primary first), optionally with a topic; their instructions and tools come with the next step.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"skills":{"type":"array","items":{"type":"string"},"description":"the skills to activate together, primary first"},"topic":{"type":"string","description":"what to focus on, e.g. career"},"name":{"type":"string","description":"one skill (older form of skills)"}}}`)},
	{Name: "recommend_skills", Description: "Rank the installed skills for a question (the router's scores); use when the intent is unclear.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"},"k":{"type":"integer","minimum":1,"maximum":20}},"required":["question"]}`)},
	{Name: "search_knowledge", Description: "Hybrid search of the active skills' source books; passages come as <knowledge> blocks with their chunk ids.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"k":{"type":"integer","minimum":1,"maximum":20},"skill":{"type":"string","description":"only this active skill (default: all active skills)"}},"required":["query"]}`)},
	{Name: "get_rules", Description: "The active skills' rules relevant to a question (never the whole rule file).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"question":{"type":"string"},"k":{"type":"integer","minimum":1,"maximum":20}},"required":["question"]}`)},
	{Name: "read_skill_resource", Description: "Read a file of a skill (knowledge YAML, rules/*.md; core: DIALOGUE.md, CRISIS.md).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"skill":{"type":"string","description":"default: the active skill"},"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "get_user_profile", Description: "Read the user's profile fields by dotted path (e.g. identity.name); says which are missing.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"fields":{"type":"array","items":{"type":"string"}}},"required":["fields"]}`)},
	{Name: "upsert_user_profile", Description: "Set the user's profile fields by dotted path (null deletes).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"fields":{"type":"object","description":"dotted path -> value"}},"required":["fields"]}`)},
	{Name: "save_skill_data", Description: "Deep-merge data into the profile under skill_data.<skill> (replace=true replaces).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"skill":{"type":"string"},"data":{"type":"object"},"replace":{"type":"boolean"}},"required":["data"]}`)},
	{Name: "collect_info", Description: "Show the user a form for missing information and end the turn to wait for it.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"},"fields":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"label":{"type":"string"},"type":{"type":"string"},"enum":{"type":"array","items":{"type":"string"}},"required":{"type":"boolean"}},"required":["name","type"]}}},"required":["fields"]}`)},
	{Name: "show_report", Description: "Show a report card.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"sections":{"type":"array","items":{"type":"object","properties":{"heading":{"type":"string"},"body":{"type":"string"}},"required":["heading","body"]}}},"required":["title","sections"]}`)},
	{Name: "show_insight", Description: "Show an insight card.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"content":{"type":"string"},"level":{"type":"string","enum":["info","warning","critical"]}},"required":["title","content"]}`)},
	historyTool,
	userSummaryTool,
}

// toolsFor lists the core tools plus the tools the active skills offer
// (active: names joined by skillSep; a name two skills share is the
// first's).
func (a *Agent) toolsFor(active string) []llm.Tool {
	out := append([]llm.Tool(nil), coreTools...)
	if a.cfg.WebSearch != nil {
		out = append(out, webSearchTool)
	}
	return append(out, a.skillTools(active)...)
}

// skillTools lists the tools the active skills offer (a name two skills
// share is the first's).
func (a *Agent) skillTools(active string) []llm.Tool {
	var out []llm.Tool
	seen := map[string]bool{}
	for _, n := range splitSkills(active) {
		sk, err := a.cfg.Skills.Get(n)
		if err != nil {
			continue
		}
		for _, t := range sk.OfferedTools() {
			if !seen[t.Name] {
				seen[t.Name] = true
				out = append(out, llm.Tool{Name: t.Name, Description: t.Description + whenToCall(t), Parameters: toolSchema(t)})
			}
		}
	}
	return out
}

func whenToCall(t skills.Tool) string {
	if t.WhenToCall == "" {
		return ""
	}
	return " (" + t.WhenToCall + ")"
}

func fieldsOf(t skills.Tool) []skills.Field {
	if t.Type == "display" {
		return t.CardProps
	}
	return t.Parameters
}

func jsonType(t string) string { return skills.JSONType(t) }

func schemaOf(fields []skills.Field) json.RawMessage {
	props := map[string]any{}
	req := []string{}
	for _, f := range fields {
		p := map[string]any{"type": jsonType(f.Type)}
		desc := f.Description
		if f.NotFuture {
			desc = strings.TrimSpace(desc + " (not in the future)")
		}
		if desc != "" {
			p["description"] = desc
		}
		if len(f.Enum) > 0 {
			p["enum"] = f.Enum
		}
		if f.Minimum != nil {
			p["minimum"] = *f.Minimum
		}
		if f.Maximum != nil {
			p["maximum"] = *f.Maximum
		}
		if f.Pattern != "" {
			p["pattern"] = f.Pattern
		}
		if f.Format != "" {
			p["format"] = f.Format
		}
		if f.Default != nil {
			p["default"] = f.Default
		}
		props[f.Name] = p
		if f.Required {
			req = append(req, f.Name)
		}
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false})
	return b
}

// validate checks args against declared fields, before the tool runs:
// required ones present (a declared default fills a missing one, in args),
// types and constraints (enum, bounds, pattern, format, not in the future),
// and no field that was not declared.
func validate(fields []skills.Field, args map[string]any, now time.Time) error {
	var errs []string
	declared := map[string]bool{}
	for _, f := range fields {
		declared[f.Name] = true
	}
	var unknown []string
	for k := range args {
		if !declared[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		var names []string
		for _, f := range fields {
			names = append(names, f.Name)
		}
		errs = append(errs, fmt.Sprintf("undeclared %s (declared: %s)", strings.Join(unknown, ", "), strings.Join(names, ", ")))
	}
	for _, f := range fields {
		v, ok := args[f.Name]
		if (!ok || v == nil) && f.Default != nil {
			v, ok = f.Default, true
			args[f.Name] = v
		}
		if !ok || v == nil {
			if f.Required {
				errs = append(errs, fmt.Sprintf("%s is required", f.Name))
			}
			continue
		}
		if err := f.Check(v, now); err != nil {
			errs = append(errs, fmt.Sprintf("%s %v", f.Name, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid arguments: %s", strings.Join(errs, "; "))
	}
	return nil
}

func decodeArgs(raw json.RawMessage) (map[string]any, error) {
	m := map[string]any{}
	if len(bytes.TrimSpace(raw)) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %v", err)
	}
	return m, nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func intArg(m map[string]any, k string, def int) int {
	if f, ok := m[k].(float64); ok && f >= 1 {
		return min(int(f), 20)
	}
	return def
}

// ExecuteTool runs one tool outside a model turn (POST /api/tools/execute),
// with skill active (or "" for core tools only).
func (a *Agent) ExecuteTool(ctx context.Context, userID, skill, name string, args json.RawMessage, emit func(Event) error) (json.RawMessage, error) {
	if err := a.cfg.Skills.Refresh(); err != nil {
		return nil, err
	}
	if err := a.cfg.Memory.EnsureUser(ctx, userID); err != nil {
		return nil, err
	}
	if emit == nil {
		emit = func(Event) error { return nil }
	}
	t := &turn{a: a, userID: userID, active: skill, emit: emit}
	if seed, ok := ctx.Value(seedKey{}).(int64); ok {
		if seed < 0 || seed > maxSeed {
			return nil, fmt.Errorf("seed %d is outside 0..2^53-1", seed)
		}
		t.seed, t.seeded = seed, true
	}
	return a.runTool(ctx, t, name, args)
}

// runTool runs one tool for a turn (or for the tools API), counted, timed
// and traced.
func (a *Agent) runTool(ctx context.Context, t *turn, name string, raw json.RawMessage) (json.RawMessage, error) {
	ctx, span := a.tracer.Start(ctx, "vibe.tool", trace.WithAttributes(attribute.String("vibe.tool", name),
		attribute.String("vibe.request_id", RequestID(ctx))))
	defer span.End()
	t0 := time.Now()
	res, err := a.execTool(ctx, t, name, raw)
	label := name
	if errors.Is(err, ErrToolUnavailable) {
		// Any name the model sends lands here: one series for them all.
		label = "unknown"
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
		a.metrics.fail(errKindTool)
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	a.metrics.toolCalls.WithLabelValues(label, outcome).Inc()
	a.metrics.toolSeconds.WithLabelValues(label).Observe(time.Since(t0).Seconds())
	return res, err
}

// filledArgs are required arguments of a core tool the tool fills itself
// when missing (recommend_skills ranks for the turn's message).
var filledArgs = map[string]bool{"recommend_skills.question": true}

// checkRequired fails a call of a core tool that leaves out an argument
// its schema requires, or gives it as null or an empty string, naming the
// argument, so the model can call again instead of getting an answer to
// nothing (get_rules without question). Skill tools are checked against
// their declared fields (validate).
func checkRequired(name string, args map[string]any) error {
	for _, tl := range coreTools {
		if tl.Name != name {
			continue
		}
		var schema struct {
			Required []string `json:"required"`
		}
		if json.Unmarshal(tl.Parameters, &schema) != nil {
			return nil
		}
		var missing []string
		for _, r := range schema.Required {
			if filledArgs[name+"."+r] {
				continue
			}
			v, ok := args[r]
			if s, isStr := v.(string); !ok || v == nil || isStr && strings.TrimSpace(s) == "" {
				missing = append(missing, r)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%s: missing required argument %s: call %s again with it", name, strings.Join(missing, ", "), name)
		}
		return nil
	}
	return nil
}

// execTool runs one tool for a turn.
func (a *Agent) execTool(ctx context.Context, t *turn, name string, raw json.RawMessage) (json.RawMessage, error) {
	args, err := decodeArgs(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := checkRequired(name, args); err != nil {
		return nil, err
	}
	activeSet := t.activeSkill()
	active := primarySkill(activeSet)
	switch name {
	case "use_skill":
		return a.useSkill(t, args)
	case "recommend_skills":
		q := str(args, "question")
		if q == "" {
			q = t.question
		}
		return a.recommendSkills(ctx, q, intArg(args, "k", 5))
	case "get_user_history":
		return a.historyToolRun(ctx, t.userID, args)
	case "get_conversation_summary":
		return a.userSummaryToolRun(ctx, t.userID)
	case "search_knowledge":
		return a.searchTool(ctx, activeSet, str(args, "skill"), str(args, "query"), intArg(args, "k", 5))
	case "web_search":
		return a.webSearchRun(ctx, args)
	case "get_rules":
		if active == "" {
			return nil, errors.New("get_rules: no skill is active; call use_skill first")
		}
		return a.getRules(ctx, splitSkills(activeSet), str(args, "question"), intArg(args, "k", 5))
	case "read_skill_resource":
		sn := str(args, "skill")
		if sn == "" {
			sn = active
		}
		if sn == "" {
			sn = skills.CoreName
		}
		sk, err := a.cfg.Skills.Get(sn)
		if err != nil {
			return nil, err
		}
		b, err := sk.ReadResource(str(args, "path"))
		if err != nil {
			return nil, fmt.Errorf("read_skill_resource: %w; resources: %s", err, strings.Join(sk.Resources(), ", "))
		}
		const maxRes = 32 << 10
		trunc := len(b) > maxRes
		if trunc {
			b = b[:maxRes]
		}
		return jsonOf(map[string]any{"skill": sk.Name, "path": str(args, "path"), "content": strings.ToValidUTF8(string(b), ""), "truncated": trunc})
	case "get_user_profile":
		return a.profileTool(ctx, t.userID, args)
	case "upsert_user_profile":
		fields, ok := args["fields"].(map[string]any)
		if !ok {
			return nil, errors.New("upsert_user_profile: fields must be a JSON object of dotted path -> value")
		}
		res, err := a.UpsertProfile(ctx, t.userID, fields)
		if err == nil {
			t.mu.Lock()
			t.userOK = false // the next prompt reads the new profile
			t.mu.Unlock()
		}
		return res, err
	case "save_skill_data":
		sn := str(args, "skill")
		if sn == "" {
			sn = active
		}
		if sn == "" {
			return nil, errors.New("save_skill_data: no skill given and none active")
		}
		// Only an installed skill's name: the name becomes a key of the
		// profile (skill_data.<skill>), so "../alice" or "*" must not.
		if sk, err := a.cfg.Skills.Get(sn); err != nil || sk.Name == skills.CoreName {
			return nil, fmt.Errorf("save_skill_data: unknown skill %q; installed: %s", sn, names(a.cfg.Skills.Headers()))
		}
		data, ok := args["data"].(map[string]any)
		if !ok {
			return nil, errors.New("save_skill_data: data must be a JSON object")
		}
		replace, _ := args["replace"].(bool)
		res, err := a.saveSkillData(ctx, t.userID, sn, data, replace)
		if err == nil {
			t.mu.Lock()
			t.userOK = false // the next prompt reads the new profile
			t.mu.Unlock()
		}
		return res, err
	case "collect_info":
		fields, ok := args["fields"].([]any)
		if !ok || len(fields) == 0 {
			return nil, errors.New("collect_info: fields must be a non-empty array")
		}
		form, _ := jsonOf(args)
		t.mu.Lock()
		t.formSent = true
		t.mu.Unlock()
		if err := t.send(Event{Type: EventForm, Form: form}); err != nil {
			return nil, err
		}
		return jsonOf(map[string]any{"status": "waiting_for_user", "form": json.RawMessage(form)})
	case "show_report", "show_insight":
		if str(args, "title") == "" {
			return nil, fmt.Errorf("%s: title is required", name)
		}
		ct := strings.TrimPrefix(name, "show_")
		props, _ := jsonOf(args)
		if err := t.send(Event{Type: EventCard, CardType: ct, Props: props}); err != nil {
			return nil, err
		}
		return jsonOf(map[string]any{"shown": ct})
	}
	return a.skillTool(ctx, t, activeSet, name, args)
}

func names(hs []skills.Header) string {
	var n []string
	for _, h := range hs {
		n = append(n, h.Name)
	}
	return strings.Join(n, ", ")
}

// jsonOf encodes a tool result (without HTML escaping, so "A > B" stays
// readable to the model and in events).
func jsonOf(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// skillTool runs a tool from the tools.yaml of an active skill (active:
// names joined by skillSep).
func (a *Agent) skillTool(ctx context.Context, t *turn, active, name string, args map[string]any) (json.RawMessage, error) {
	var tool skills.Tool
	var sk *skills.Skill
	found := false
	for _, n := range splitSkills(active) {
		if found {
			break
		}
		s, err := a.cfg.Skills.Get(n)
		if err != nil {
			continue
		}
		for _, tl := range s.OfferedTools() {
			if tl.Name == name {
				tool, sk, found = tl, s, true
			}
		}
	}
	if !found {
		owner := ""
		for _, h := range a.cfg.Skills.Headers() {
			if sk, err := a.cfg.Skills.Get(h.Name); err == nil {
				if _, ok := sk.Tool(name); ok {
					owner = h.Name
					break
				}
			}
		}
		if owner != "" {
			return nil, fmt.Errorf("%w: %s belongs to skill %s, which is not active; call use_skill {\"name\":%q} first", ErrToolUnavailable, name, owner, owner)
		}
		return nil, fmt.Errorf("%w: unknown tool %s", ErrToolUnavailable, name)
	}
	if fields, ok := argFields(tool); ok {
		if err := validate(fields, args, a.cfg.Now()); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if is := tool.Issues(sk.FS()); len(is) > 0 && tool.Type != skills.TypeCompute {
		return nil, fmt.Errorf("%s: cannot run: %s", name, is[0].Message)
	}
	wrap := func(out json.RawMessage, err error) (json.RawMessage, error) {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return out, nil
	}
	switch tool.Type {
	case skills.TypeRandom:
		return wrap(a.randomTool(ctx, t, sk, tool, args))
	case skills.TypeCollect:
		return wrap(a.collectTool(t, tool, args))
	case skills.TypeRetrieve:
		return wrap(a.retrieveTool(ctx, sk, tool, args))
	case skills.TypeFlow:
		return wrap(a.flowTool(ctx, t, sk, tool, args))
	case "display":
		props, _ := jsonOf(args)
		ct := tool.CardType
		if ct == "" {
			ct = tool.Name
		}
		if err := t.send(Event{Type: EventCard, CardType: ct, Props: props, Template: tool.Card}); err != nil {
			return nil, err
		}
		return jsonOf(map[string]any{"shown": ct})
	case "compute":
		key, useCache := "", cacheable(tool) && a.cache != nil
		if useCache {
			key, useCache = cacheKey(sk.Name, tool, args)
		}
		out, hit := a.cache.get(key)
		if !useCache || !hit {
			var err error
			if out, err = a.callPlugin(ctx, sk, tool, args); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if useCache {
				a.cache.put(key, out)
			}
		}
		t.mu.Lock()
		t.computed = append(t.computed, fmt.Sprintf("%s → %s", name, out))
		t.mu.Unlock()
		return out, nil
	}
	return nil, fmt.Errorf("%s: tools of type %q have no runtime behaviour: use one of %s in tools/tools.yaml", name, tool.Type, strings.Join(skills.Types, ", "))
}

// PluginResult is the unified output of a compute plugin.
type PluginResult struct {
	Result     json.RawMessage `json:"result"`
	Features   json.RawMessage `json:"features,omitempty"`
	Confidence *float64        `json:"confidence,omitempty"`
	Meta       json.RawMessage `json:"meta,omitempty"`
}

// callPlugin runs a compute tool's plugin with the validated inputs:
// {"tool": name, "input": {...}} in, PluginResult out. The caller (the
// client of /api/tools/execute, the model) only ever sees a short error:
// what the plugin wrote on stderr, an HTTP error body or output that is not
// a result goes to the server log, never into the error.
func (a *Agent) callPlugin(ctx context.Context, sk *skills.Skill, tool skills.Tool, args map[string]any) (json.RawMessage, error) {
	p := tool.Plugin
	if p == nil || (p.URL == "" && len(p.Command) == 0) {
		return nil, errors.New("no plugin configured: add plugin: {url: ...} or plugin: {command: [...]} to the tool in tools/tools.yaml")
	}
	timeout := a.cfg.ToolTimeout
	if p.Timeout != "" {
		d, err := time.ParseDuration(p.Timeout)
		if err != nil {
			return nil, fmt.Errorf("tools.yaml plugin.timeout %q: %v", p.Timeout, err)
		}
		timeout = d
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	in, _ := json.Marshal(map[string]any{"tool": tool.Name, "input": args})
	limit := a.cfg.PluginOutputBytes
	log := a.logger().With("skill", sk.Name, "tool", tool.Name, "request_id", RequestID(ctx))
	var out []byte
	var name string
	if p.URL != "" {
		name = p.URL
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL, bytes.NewReader(in))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := a.cfg.HTTPClient.Do(req)
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("plugin %s: timed out after %s (plugin.timeout in tools.yaml)", p.URL, timeout)
			}
			log.Warn("plugin request failed", "plugin", p.URL, "err", err)
			return nil, fmt.Errorf("plugin %s: request failed (the server log has the detail%s)", p.URL, reqRef(ctx))
		}
		defer resp.Body.Close()
		body := &boundedBuffer{max: limit}
		if _, err := io.Copy(body, io.LimitReader(resp.Body, limit+1)); err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, fmt.Errorf("plugin %s: timed out after %s (plugin.timeout in tools.yaml)", p.URL, timeout)
			}
			log.Warn("plugin response unreadable", "plugin", p.URL, "err", err)
			return nil, fmt.Errorf("plugin %s: response unreadable (the server log has the detail%s)", p.URL, reqRef(ctx))
		}
		if resp.StatusCode/100 != 2 {
			log.Warn("plugin failed", "plugin", p.URL, "status", resp.StatusCode, "body", body.String(), "body_bytes", body.total, "cut", body.cut())
			return nil, fmt.Errorf("plugin %s: HTTP %d (the server log has the response%s)", p.URL, resp.StatusCode, reqRef(ctx))
		}
		if body.cut() {
			log.Warn("plugin output over the limit", "plugin", p.URL, "bytes", body.total, "limit", limit)
			return nil, fmt.Errorf("plugin %s: output is larger than %d bytes (serve.plugin_output_bytes); cut and not used", p.URL, limit)
		}
		out = body.Bytes()
	} else {
		name = p.Command[0]
		if !a.commandPluginAllowed(sk.Name) {
			return nil, fmt.Errorf("plugin %s: command plugins of skill %s are refused by this server (serve.command_plugins); ask its operator to add the skill if it is trusted", name, sk.Name)
		}
		env, err := pluginEnv(p.Env, a.cfg.Getenv)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", name, err)
		}
		prog := p.Command[0]
		if !filepath.IsAbs(prog) && strings.ContainsRune(filepath.ToSlash(prog), '/') {
			// plugins/x is the workspace's, whatever directory it runs in.
			if a.cfg.PluginDir != "" {
				prog = filepath.Join(a.cfg.PluginDir, prog)
			} else if abs, err := filepath.Abs(prog); err == nil {
				prog = abs
			}
		}
		cmd := exec.CommandContext(ctx, prog, p.Command[1:]...)
		cmd.Env = env
		cmd.Dir = sk.Dir()
		if cmd.Dir == "" {
			cmd.Dir = a.cfg.PluginDir
		}
		cmd.Stdin = bytes.NewReader(in)
		stdout := &boundedBuffer{max: limit, overflow: cancel}
		// stderr only goes to the log: its start is enough.
		stderr := &boundedBuffer{max: min(limit, maxLoggedStderr)}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		// A child the plugin left behind may hold the pipes open: stop
		// waiting for them shortly after the plugin ends or is killed.
		cmd.WaitDelay = time.Second
		err = cmd.Run()
		if stderr.total > 0 || err != nil {
			level := slog.LevelInfo
			if err != nil {
				level = slog.LevelWarn
			}
			log.Log(ctx, level, "plugin stderr", "plugin", name, "err", err, "stderr", stderr.String(), "stderr_bytes", stderr.total, "cut", stderr.cut())
		}
		switch {
		case stdout.cut():
			return nil, fmt.Errorf("plugin %s: output is larger than %d bytes (serve.plugin_output_bytes); cut and stopped", name, limit)
		case err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, fmt.Errorf("plugin %s: timed out after %s (plugin.timeout in tools.yaml)", name, timeout)
		case err != nil:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return nil, fmt.Errorf("plugin %s: failed (%s; its stderr is in the server log%s)", name, ee.ProcessState, reqRef(ctx))
			}
			var pe *fs.PathError
			if errors.As(err, &pe) || errors.Is(err, exec.ErrNotFound) {
				return nil, fmt.Errorf("plugin %s: cannot start: %s", name, shortExecErr(err))
			}
			return nil, fmt.Errorf("plugin %s: failed (the server log has the detail%s)", name, reqRef(ctx))
		}
		out = stdout.Bytes()
	}
	var res PluginResult
	if err := json.Unmarshal(out, &res); err != nil || len(res.Result) == 0 || string(res.Result) == "null" {
		log.Warn("plugin output is not a result", "plugin", name, "output", logCut(out), "bytes", len(out))
		return nil, fmt.Errorf("plugin %s: output must be a JSON object {result, features, confidence, meta}; got %d bytes that are not (the server log has them%s)", name, len(out), reqRef(ctx))
	}
	if res.Confidence != nil && (*res.Confidence < 0 || *res.Confidence > 1) {
		return nil, fmt.Errorf("plugin output confidence %v is outside 0..1", *res.Confidence)
	}
	return jsonOf(res)
}

// DefaultPluginOutputBytes bounds what a plugin may write on stdout and on
// stderr (each) and an HTTP plugin's response body.
const DefaultPluginOutputBytes = 4 << 20

// maxLoggedStderr is how much of a command plugin's stderr is kept for the
// log.
const maxLoggedStderr = 64 << 10

// DefaultPluginPath is the PATH of a command plugin that does not list PATH
// in plugin.env.
const DefaultPluginPath = "/usr/local/bin:/usr/bin:/bin"

// pluginEnv is a command plugin's environment: PATH (DefaultPluginPath
// unless declared) and the declared variables the server has, nothing else.
func pluginEnv(declared []string, getenv func(string) string) ([]string, error) {
	env := []string{}
	hasPath := false
	for _, n := range declared {
		if !validEnvName(n) {
			return nil, fmt.Errorf("plugin.env %q in tools.yaml is not a variable name (letters, digits and _)", n)
		}
		if n == "PATH" {
			hasPath = true
		}
		if v := getenv(n); v != "" {
			env = append(env, n+"="+v)
		} else if n == "PATH" {
			hasPath = false
		}
	}
	if !hasPath {
		env = append(env, "PATH="+DefaultPluginPath)
	}
	return env, nil
}

func validEnvName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// commandPluginAllowed reports whether the server runs the command plugins
// of a skill (Config.CommandPluginSkills).
func (a *Agent) commandPluginAllowed(skill string) bool {
	if a.cfg.CommandPluginSkills == nil {
		return true
	}
	for _, n := range a.cfg.CommandPluginSkills {
		if n == "*" || n == skill {
			return true
		}
	}
	return false
}

// shortExecErr is why a command did not start, without the environment
// or the output: "no such file or directory", "permission denied".
func shortExecErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + " " + pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// reqRef names the request in a short error, so the log line is found.
func reqRef(ctx context.Context) string {
	if id := RequestID(ctx); id != "" {
		return ", request " + id
	}
	return ""
}

// logCut is the start of a plugin's output for the log.
func logCut(b []byte) string {
	const max = 2048
	if len(b) > max {
		return strings.ToValidUTF8(string(b[:max]), "") + "…"
	}
	return strings.ToValidUTF8(string(b), "")
}

// boundedBuffer keeps the first max bytes written to it and counts the
// rest, which it drops; overflow, when set, is called once when the first
// byte past max arrives. (Not a bytes.Buffer underneath: io.Copy would use
// its ReadFrom and read without bound.)
type boundedBuffer struct {
	buf      []byte
	max      int64
	total    int64
	overflow func()
	fired    bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	b.total += int64(n)
	if room := b.max - int64(len(b.buf)); room > 0 {
		if int64(len(p)) > room {
			p = p[:room]
		}
		b.buf = append(b.buf, p...)
	}
	if b.total > b.max && b.overflow != nil && !b.fired {
		b.fired = true
		b.overflow()
	}
	return n, nil
}

// Bytes are the bytes kept.
func (b *boundedBuffer) Bytes() []byte { return b.buf }

// cut reports whether bytes were dropped.
func (b *boundedBuffer) cut() bool { return b.total > b.max }

// String is the kept text, valid UTF-8, said to be cut when it is.
func (b *boundedBuffer) String() string {
	s := strings.ToValidUTF8(string(b.buf), "")
	if b.cut() {
		s += fmt.Sprintf("… [cut: %d of %d bytes kept]", len(b.buf), b.total)
	}
	return s
}

// searchTool runs search_knowledge in the themes of the active skills
// (active: names joined by skillSep), or of only one of them.
func (a *Agent) searchTool(ctx context.Context, active, only, query string, k int) (json.RawMessage, error) {
	names := splitSkills(active)
	if len(names) == 0 {
		return nil, errors.New("search_knowledge: no skill is active; call use_skill first")
	}
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("search_knowledge: query is required")
	}
	res, err := a.searchAcross(ctx, names, only, query, k)
	if err != nil {
		return nil, err
	}
	out := map[string]any{"skill": names[0], "query": query, "passages": res.Passages}
	if len(names) > 1 && only == "" {
		out["skills"] = names
	}
	if res.SearchedAs != "" {
		out["searched_as"] = res.SearchedAs
		out["bridged_by"] = res.BridgedBy
	}
	addLanguages(out, res.QueryLang, res.SourceLang)
	if res.Unbridged {
		out["unbridged"] = true
		out["note"] = res.Note
	}
	return jsonOf(out)
}

// addLanguages names, in a tool result, the language of the question and
// that of the sources it was searched in when they differ ("Spanish",
// "English"), so the model knows what was searched as: the model's
// rewrite or the glossary's terms (searched_as), or, offline with neither,
// the question's own words.
func addLanguages(out map[string]any, queryLang, sourceLang string) {
	if queryLang != "" && sourceLang != "" && queryLang != sourceLang {
		out["question_language"] = LanguageName(queryLang)
		out["source_language"] = LanguageName(sourceLang)
	}
}

// Passage is a search hit with its citation.
type Passage struct {
	ChunkID     string   `json:"chunk_id"`
	Source      string   `json:"source"`
	Doc         string   `json:"doc"`
	HeadingPath []string `json:"heading_path,omitempty"`
	Start       int      `json:"start"`
	End         int      `json:"end"`
	Score       float64  `json:"score"`
	Text        string   `json:"text"`
	// Skill is the active skill whose sources hold the passage (set when
	// several are active).
	Skill string `json:"skill,omitempty"`
}

// searchResult is what a search found and how the query was carried over
// to the sources' language.
type searchResult struct {
	Passages []Passage
	// SearchedAs is the text searched besides the question when the
	// question is in another language than the sources: the model's
	// rewrite or the glossary's terms; BridgedBy says which ("llm",
	// "glossary").
	SearchedAs, BridgedBy string
	// Unbridged is set when the question is in another language than the
	// sources and could not be carried over (no model, no glossary term
	// it names): the passages match its words only, and Note says so.
	Unbridged bool
	Note      string
	// QueryLang and SourceLang are the languages of the question and of
	// the sources (langZH, langEN, langES …).
	QueryLang, SourceLang string
}

func (a *Agent) search(ctx context.Context, active, query string, k int) ([]Passage, error) {
	res, err := a.searchFull(ctx, active, query, k)
	return res.Passages, err
}

func (a *Agent) searchFull(ctx context.Context, active, query string, k int) (res searchResult, err error) {
	ctx, span := a.tracer.Start(ctx, "vibe.search", trace.WithAttributes(attribute.String("vibe.skill", active),
		attribute.Int("vibe.k", k), attribute.String("vibe.request_id", RequestID(ctx))))
	t0 := time.Now()
	defer func() {
		a.metrics.searchSeconds.Observe(time.Since(t0).Seconds())
		span.SetAttributes(attribute.Int("vibe.passages", len(res.Passages)))
		if err != nil {
			a.metrics.searches.WithLabelValues(searchError).Inc()
			a.metrics.fail(errKindSearch)
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}()
	if a.cfg.Searcher == nil {
		return res, errors.New("search_knowledge: no knowledge store is configured; run `vibe ingest <theme>` and restart `vibe serve`")
	}
	sk, err := a.cfg.Skills.Get(active)
	if err != nil {
		return res, err
	}
	var g *Glossary
	if idx, err := a.rules.get(sk); err == nil {
		g = idx.glossary
	}
	br := a.bridger.Bridge(ctx, query, a.themeLanguage(sk, query), g, sk.Name, sk.Theme)
	res.SearchedAs, res.BridgedBy, res.Unbridged = br.SearchedAs, br.BridgedBy, br.Unbridged
	res.QueryLang, res.SourceLang = br.QueryLang, br.SourceLang
	if br.Unbridged {
		res.Note = fmt.Sprintf("The question is in %s and the sources in %s, and it could not be carried over (no model configured to rewrite it, and it names no term of the skill's glossary): these passages match its words only and may not answer it; say so in the answer. / 问题与原文语言不同且无法转换，以下段落可能不相关，请在回答中说明。", LanguageName(br.QueryLang), LanguageName(br.SourceLang))
	}
	text := br.Text(query)
	q := knowledge.Query{Theme: sk.Theme, Text: text, K: k, Mode: knowledge.SearchLexical}
	if a.cfg.Embedder != nil {
		if v, err := a.cfg.Embedder.Embed(ctx, []string{text}); err == nil && len(v) == 1 {
			q.Vector, q.Mode = v[0], knowledge.SearchHybrid
		}
	}
	hits, err := a.cfg.Searcher.Search(ctx, q)
	if err != nil {
		return res, fmt.Errorf("search_knowledge: %w", err)
	}
	res.Passages = make([]Passage, 0, len(hits))
	ids := make([]string, 0, len(hits))
	for _, h := range hits {
		c := h.Chunk
		res.Passages = append(res.Passages, Passage{ChunkID: c.ID, Source: c.Source, Doc: c.Doc, HeadingPath: c.HeadingPath, Start: c.Start, End: c.End, Score: h.Score, Text: c.Text})
		ids = append(ids, c.ID)
	}
	if st := statsFrom(ctx); st != nil {
		st.addSearch(ids)
	} else {
		a.metrics.searches.WithLabelValues(searchNoTurn).Inc()
	}
	return res, nil
}
