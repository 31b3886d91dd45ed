package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// A skill whose front matter says requires_birth_info reads the user's
// birth data: while the profile lacks identity.birth_info the runtime makes
// collecting it the first step (the design's SOP P1, collect_info), with a
// ready form whose dotted field names save the answers to the profile.

// birthInfoPath is the profile field a requires_birth_info skill needs.
const birthInfoPath = "identity.birth_info"

// birthInfoForm is the collect_info form asking for the birth data.
func birthInfoForm(skills []string) json.RawMessage {
	b, _ := jsonOf(map[string]any{
		"reason": fmt.Sprintf("%s 需要你的出生信息 / %s needs your birth data", strings.Join(skills, "、"), strings.Join(skills, ", ")),
		"fields": []map[string]any{
			{"name": birthInfoPath + ".date", "label": "出生日期 / birth date", "type": "date", "required": true},
			{"name": birthInfoPath + ".time", "label": "出生时间 / birth time", "type": "time"},
			{"name": birthInfoPath + ".place", "label": "出生地点 / birth place", "type": "string"},
			{"name": "identity.gender", "label": "性别 / gender", "type": "string"},
		},
	})
	return b
}

// needBirthInfo returns the active skills that require birth data the
// user's profile lacks (none when it has identity.birth_info).
func (a *Agent) needBirthInfo(ctx context.Context, userID string, active []string) []string {
	var need []string
	for _, n := range active {
		if sk, err := a.cfg.Skills.Get(n); err == nil && sk.RequiresBirthInfo {
			need = append(need, n)
		}
	}
	if len(need) == 0 {
		return nil
	}
	prof, err := a.loadProfile(ctx, userID)
	if err != nil {
		return nil
	}
	if v, ok := lookup(prof, birthInfoPath); ok && v != nil {
		if m, isMap := v.(map[string]any); !isMap || len(m) > 0 {
			return nil
		}
	}
	return need
}

// birthInfoStep is the prompt's collect step: what to call while the
// profile lacks the birth data active skills require ("" when nothing is
// missing).
func (a *Agent) birthInfoStep(ctx context.Context, t *turn, active []string) string {
	need := a.needBirthInfo(ctx, t.userID, active)
	if len(need) == 0 {
		return ""
	}
	return fmt.Sprintf("\n## 收集步骤 / collect step\n技能 %s 需要出生信息，而用户资料中没有 %s。涉及命盘或个人判断之前，先调用 collect_info 收集，不要臆测 / skill %s requires the user's birth data and the profile has no %s: before any chart or personal reading, call collect_info with %s\n",
		strings.Join(need, "、"), birthInfoPath, strings.Join(need, ", "), birthInfoPath, birthInfoForm(need))
}
