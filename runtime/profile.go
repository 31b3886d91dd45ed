package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// lookup resolves a dotted path in a JSON object. "skills.X..." falls back to
// "skill_data.X..." where save_skill_data stores skill data.
func lookup(m map[string]any, path string) (any, bool) {
	get := func(parts []string) (any, bool) {
		var cur any = m
		for _, p := range parts {
			obj, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = obj[p]; !ok {
				return nil, false
			}
		}
		return cur, true
	}
	parts := strings.Split(path, ".")
	if v, ok := get(parts); ok {
		return v, true
	}
	if parts[0] == "skills" {
		return get(append([]string{"skill_data"}, parts[1:]...))
	}
	return nil, false
}

func (a *Agent) loadProfile(ctx context.Context, userID string) (map[string]any, error) {
	raw, err := a.cfg.Memory.Profile(ctx, userID)
	if err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	return profileObject(userID, raw)
}

// profileObject decodes a stored profile ({} when empty).
func profileObject(userID string, raw json.RawMessage) (map[string]any, error) {
	m := map[string]any{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, fmt.Errorf("profile of %s is not a JSON object: %w", userID, err)
		}
	}
	return m, nil
}

func (a *Agent) profileTool(ctx context.Context, userID string, args map[string]any) (json.RawMessage, error) {
	fs, _ := args["fields"].([]any)
	if len(fs) == 0 {
		return nil, errors.New("get_user_profile: fields must list paths such as identity.birth_info")
	}
	m, err := a.loadProfile(ctx, userID)
	if err != nil {
		return nil, err
	}
	found := map[string]any{}
	missing := []string{}
	for _, f := range fs {
		p, _ := f.(string)
		if v, ok := lookup(m, p); ok {
			found[p] = v
		} else {
			missing = append(missing, p)
		}
	}
	a.metrics.profileFields.WithLabelValues("found").Add(float64(len(found)))
	a.metrics.profileFields.WithLabelValues("missing").Add(float64(len(missing)))
	return jsonOf(map[string]any{"found": found, "missing": missing})
}

func deepMerge(dst, src map[string]any) {
	for k, v := range src {
		if sv, ok := v.(map[string]any); ok {
			if dv, ok := dst[k].(map[string]any); ok {
				deepMerge(dv, sv)
				continue
			}
		}
		dst[k] = v
	}
}

// saveSkillData merges (or, with replace, sets) the skill's data in the
// user's profile and bumps its version, as one atomic read-modify-write of
// the store (knowledge.MemoryStore.UpdateProfile): concurrent calls, from
// this process or another replica, all land.
func (a *Agent) saveSkillData(ctx context.Context, userID, skill string, data map[string]any, replace bool) (json.RawMessage, error) {
	delete(data, "_meta")
	var version float64
	_, err := a.cfg.Memory.UpdateProfile(ctx, userID, func(raw json.RawMessage) (json.RawMessage, error) {
		m, err := profileObject(userID, raw)
		if err != nil {
			return nil, err
		}
		sd, _ := m["skill_data"].(map[string]any)
		if sd == nil {
			sd = map[string]any{}
			m["skill_data"] = sd
		}
		cur, _ := sd[skill].(map[string]any)
		version = 0
		if cur != nil {
			if meta, ok := cur["_meta"].(map[string]any); ok {
				version, _ = meta["version"].(float64)
			}
		}
		if cur == nil || replace {
			cur = map[string]any{}
		}
		// data is merged into a fresh copy each call: fn may be retried.
		fresh := map[string]any{}
		if b, err := json.Marshal(data); err == nil {
			_ = json.Unmarshal(b, &fresh)
		}
		deepMerge(cur, fresh)
		cur["_meta"] = map[string]any{"version": version + 1, "updated_at": a.cfg.Now().UTC().Format("2006-01-02T15:04:05Z07:00")}
		sd[skill] = cur
		return json.Marshal(m)
	})
	if err != nil {
		return nil, fmt.Errorf("save_skill_data: %w", err)
	}
	return jsonOf(map[string]any{"saved": "skill_data." + skill, "version": version + 1})
}
