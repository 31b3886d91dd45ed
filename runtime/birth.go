package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A skill whose front matter says requires_birth_info reads the user's
// birth data: while the profile lacks identity.birth_info the runtime makes
// collecting it the first step (the design's SOP P1, collect_info), with a
// ready form whose dotted field names save the answers to the profile.

// birthInfoPath is the profile field a requires_birth_info skill needs.
const birthInfoPath = "identity.birth_info"

// birthInfoForm is the collect_info form asking for the birth data: the
// date, the calendar it is in (solar or lunar), the time and its time
// zone, the place, and the gender as a choice.
func birthInfoForm(skills []string) json.RawMessage {
	b, _ := jsonOf(map[string]any{
		"reason": fmt.Sprintf("%s 需要你的出生信息 / %s needs your birth data", strings.Join(skills, "、"), strings.Join(skills, ", ")),
		"fields": []map[string]any{
			{"name": birthInfoPath + ".date", "label": "出生日期 / birth date", "type": "date", "required": true},
			{"name": birthInfoPath + ".calendar", "label": "历法 / calendar (solar 公历, lunar 农历)", "type": "string", "enum": calendars, "default": "solar", "required": true},
			{"name": birthInfoPath + ".time", "label": "出生时间 / birth time", "type": "time"},
			{"name": birthInfoPath + ".timezone", "label": "时区 / time zone (e.g. Asia/Shanghai, UTC+8)", "type": "string"},
			{"name": birthInfoPath + ".place", "label": "出生地点 / birth place", "type": "string"},
			{"name": "identity.gender", "label": "性别 / gender", "type": "string", "enum": genders, "required": true},
		},
	})
	return b
}

// calendars and genders are the choices of the birth form.
var (
	calendars = []string{"solar", "lunar"}
	genders   = []string{"male", "female"}
)

// checkBirthValue checks a submitted value of the birth form's fields:
// the date as YYYY-MM-DD, the time as HH:MM, the calendar and the gender
// among the choices, the time zone an IANA name or a UTC offset. Other
// fields are not checked ("" and nil: no error).
func checkBirthValue(field string, v any) error {
	s, isStr := v.(string)
	if v == nil || (isStr && strings.TrimSpace(s) == "") {
		return nil
	}
	if !isStr {
		switch field {
		case birthInfoPath + ".date", birthInfoPath + ".time", birthInfoPath + ".calendar", birthInfoPath + ".timezone", "identity.gender":
			return fmt.Errorf("%s: want a string, got %v", field, v)
		}
		return nil
	}
	s = strings.TrimSpace(s)
	switch field {
	case birthInfoPath + ".date":
		if _, err := time.Parse("2006-01-02", s); err != nil {
			return fmt.Errorf("%s: %q is not a date as YYYY-MM-DD (e.g. 1990-05-01)", field, s)
		}
	case birthInfoPath + ".time":
		if _, err := time.Parse("15:04", s); err != nil {
			if _, err2 := time.Parse("15:04:05", s); err2 != nil {
				return fmt.Errorf("%s: %q is not a time as HH:MM (e.g. 08:30)", field, s)
			}
		}
	case birthInfoPath + ".calendar":
		if !slices.Contains(calendars, s) {
			return fmt.Errorf("%s: %q is not one of %s", field, s, strings.Join(calendars, ", "))
		}
	case "identity.gender":
		if !slices.Contains(genders, s) {
			return fmt.Errorf("%s: %q is not one of %s", field, s, strings.Join(genders, ", "))
		}
	case birthInfoPath + ".timezone":
		if _, ok := utcOffset(s); ok {
			return nil
		}
		if _, err := time.LoadLocation(s); err != nil || s == "Local" {
			return fmt.Errorf("%s: %q is neither a time zone name (e.g. Asia/Shanghai) nor an offset (e.g. UTC+8, +05:30)", field, s)
		}
	}
	return nil
}

// utcOffset reads "UTC+8", "UTC-03:30", "GMT+5:45", "+08:00" as seconds.
func utcOffset(s string) (int, bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	u = strings.TrimPrefix(strings.TrimPrefix(u, "UTC"), "GMT")
	if u == "" {
		return 0, true
	}
	sign := 1
	switch u[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, false
	}
	h, m, hasM := strings.Cut(u[1:], ":")
	if !hasM && len(h) == 4 {
		h, m = h[:2], h[2:]
	}
	hh, err := strconv.Atoi(h)
	if err != nil || hh > 14 || len(h) > 2 {
		return 0, false
	}
	mm := 0
	if m != "" {
		if mm, err = strconv.Atoi(m); err != nil || mm >= 60 || len(m) != 2 {
			return 0, false
		}
	}
	return sign * (hh*3600 + mm*60), true
}

// needsChart reports whether a message asks for a reading of a particular
// person (the user or someone they name) or gives birth data, the
// questions a birth-data step is for; a question about the theme itself
// ("甲木参天是什么意思", "What is the Yang Blade?") does not.
func needsChart(msg string) bool {
	low := strings.ToLower(msg)
	// Ways of asking that are not about the asker.
	for _, p := range []string{"我想知道", "我想问", "我想了解", "我想请教", "请告诉我", "告诉我", "给我讲讲", "给我解释", "帮我解释", "我不明白", "我不懂", "我听说",
		"i want to know", "i'd like to know", "i would like to know", "tell me", "can you tell me", "explain to me", "i wonder", "i heard"} {
		low = strings.ReplaceAll(low, p, " ")
	}
	if birthDate.MatchString(low) {
		return true
	}
	for _, w := range []string{"我", "本人", "咱", "自己", "孩子", "儿子", "女儿", "老公", "老婆", "丈夫", "妻子", "男朋友", "女朋友", "对象", "父亲", "母亲", "爸爸", "妈妈",
		"排盘", "起盘", "排八字", "算命", "算一算", "算算", "合婚", "生辰", "流年运势"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	for _, w := range []string{"i", "i'm", "me", "my", "mine", "myself", "we", "our", "son", "daughter", "husband", "wife", "partner", "boyfriend", "girlfriend",
		"horoscope"} {
		if containsWord(low, w) {
			return true
		}
	}
	return false
}

// birthDate finds a date of birth in a message: 1990-05-01, 1990/5/1,
// 1990年5月1日.
var birthDate = regexp.MustCompile(`(1[89]|20)\d\d\s*[-/.年]\s*\d{1,2}`)

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
// profile lacks the birth data active skills require and the message needs
// a chart (needsChart); "" otherwise.
func (a *Agent) birthInfoStep(ctx context.Context, t *turn, msg string, active []string) string {
	if !needsChart(msg) {
		return ""
	}
	need := a.needBirthInfo(ctx, t.userID, active)
	if len(need) == 0 {
		return ""
	}
	return fmt.Sprintf("\n## 收集步骤 / collect step\n技能 %s 需要出生信息，而用户资料中没有 %s。涉及命盘或个人判断之前，先调用 collect_info 收集，不要臆测 / skill %s requires the user's birth data and the profile has no %s: before any chart or personal reading, call collect_info with %s\n",
		strings.Join(need, "、"), birthInfoPath, strings.Join(need, ", "), birthInfoPath, birthInfoForm(need))
}
