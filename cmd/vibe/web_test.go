package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/llm"
	"github.com/vibelife/vibe/llm/llmtest"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/skills"
)

// chromium finds Debian's Chromium (scripts/test-deps.sh installs it). On a
// developer's machine without it the page test is skipped, loudly; in CI
// (CI=true) its absence fails the run.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on this machine: the chat page is not tested in a browser; run `make test-deps` (apt-get install chromium)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED: " + msg)
	return ""
}

// webModel is the scripted model behind the page: the brew flow (rules and
// passages, the plugin, the skill's card, a Markdown answer citing the
// passage by chunk id and linking to a URL holding [R001]; each answer
// numbered, so a regenerated one differs), a form asking for the birth
// date, the structured form answer, and an answer carrying script and
// javascript: links.
func webModel(t *testing.T) func(llmtest.Request) llmtest.Reply {
	var answers atomic.Int32
	return func(req llmtest.Request) llmtest.Reply {
		q := req.LastUserMessage()
		tools := toolMessages(req)
		calls := func(cs ...llm.ToolCall) llmtest.Reply { return llmtest.Reply{ToolCalls: cs} }
		switch {
		case strings.HasPrefix(q, runtime.FormMarker):
			var f struct {
				Values map[string]any `json:"form_response"`
				Saved  []string       `json:"saved_to_profile"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(q, runtime.FormMarker)), &f); err != nil {
				return llmtest.Text("the form answer is not JSON: " + err.Error())
			}
			return llmtest.Text(fmt.Sprintf("Thank you: I saved your birth date %v (%s).", f.Values["identity.birth_info.date"], strings.Join(f.Saved, ", ")))
		case strings.Contains(q, "birth"):
			return calls(llm.ToolCall{ID: "f1", Name: "collect_info", Arguments: `{"reason":"I need your birth date.","fields":[{"name":"identity.birth_info.date","label":"Birth date","type":"date","required":true},{"name":"identity.name","label":"Name","type":"string"}]}`})
		case strings.HasPrefix(q, "Hello"):
			return llmtest.Text("Hello! Ask me about brewing tea.")
		case strings.Contains(q, "xss"):
			return llmtest.Text("Look: <script>window.__xss=1</script> <img src=x onerror=\"window.__xss=3\"> [click me](javascript:window.__xss=2) and [docs](https://example.org/tea).")
		case tools["search_knowledge"] == "":
			return calls(
				llm.ToolCall{ID: "c2", Name: "get_rules", Arguments: `{"question":"water temperature for green tea"}`},
				llm.ToolCall{ID: "c3", Name: "search_knowledge", Arguments: `{"query":"green tea water temperature °C","k":5}`},
			)
		case tools["calc_brew"] == "":
			return calls(llm.ToolCall{ID: "c4", Name: "calc_brew", Arguments: `{"tea":"green","vessel_ml":300}`})
		case tools["show_brew_card"] == "":
			return brewCardCall(t, tools)
		default:
			p := temperaturePassage(t, tools["search_knowledge"])
			return llmtest.Text(fmt.Sprintf("## Water for green tea\n\nFor **300 ml** of green tea use about 6 g of leaves and water at 80 °C, never at a rolling boil; spring buds want 75 to 80 °C [%s].\n\n"+
				"| Leaf | Water |\n|---|---|\n| spring buds | 75–80 °C |\n| mature leaves | 80–85 °C |\n\n"+
				"- warm the glass first\n- pour the water down the side\n\nMore in [the tea guide](https://example.org/guide[R001]) (answer %d).", p.ChunkID, answers.Add(1)))
		}
	}
}

// screenshotDir is where the page test writes its screenshots (git ignores
// .vibe/); VIBE_SCREENSHOTS overrides it (VIBE_SCREENSHOTS=$PWD/docs/img
// refreshes the ones docs/page.md shows).
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("VIBE_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(demoRepo, ".vibe", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser is a headless Chromium driving one page, with the helpers the
// page tests use: each step fails the test with a screenshot of the page
// as it was.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

type C = chromedp.CSS

func newBrowser(t *testing.T) *browser {
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.Headless,
		chromedp.WindowSize(1100, 760), chromedp.Flag("disable-gpu", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelA)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	// The first action starts the browser: its context must not carry the
	// timeout (that would stop the browser); the later ones do.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelT)
	return &browser{t: t, ctx: ctx, shots: screenshotDir(t)}
}

func (b *browser) shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(b.shots, name+".png"), buf, 0o644)
	})
}

func poll(expr string) chromedp.Action[chromedp.Void] { return chromedp.Poll[chromedp.Void](expr) }

func js(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool]("("+expr+", true)")(ctx, tg)
		return err
	})
}

func (b *browser) step(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	start := time.Now()
	defer func() { b.t.Logf("%s: %.1fs", what, time.Since(start).Seconds()) }()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		_ = chromedp.Do(b.ctx, b.shot("failed"))
		b.t.Fatalf("%s: %v (the page as it was: %s)", what, err, filepath.Join(b.shots, "failed.png"))
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(C(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// eval evaluates a JavaScript expression into v's type.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// TestChatPageInChromium drives the page served by vibe serve in headless
// Chromium: sign in, the welcome with the skill's example questions, pick
// the demo skill, ask, see the streamed Markdown answer with one source
// list and the skill's own card, open a citation, copy, regenerate and edit
// the last message, give feedback, fill and submit a form that lands in
// the profile, see the profile, check another user does not see the
// conversations, and that model output cannot run script.
func TestChatPageInChromium(t *testing.T) {
	fake := llmtest.New(t)
	fake.SetFallback(webModel(t))
	ts := demoServer(t, map[string]string{"OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "test"})
	br := newBrowser(t)
	ctx, shots, step, text, shot := br.ctx, br.shots, br.step, br.text, br.shot

	// Sign in: a wrong key is refused, the right one opens the chat.
	step("open the page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(C("#signin-form")))
	step("a wrong key", chromedp.SendKeys(C("#api-key"), "nope"), chromedp.Click(C("#signin-button")),
		poll(`document.getElementById("signin-error").textContent.includes("refused")`))
	if hint := eval[bool](br, `document.getElementById("signin-hint").hidden`); !hint {
		t.Errorf("a server with keys shows the --insecure-dev hint")
	}
	step("sign in", js(`document.getElementById("api-key").value = ""`), chromedp.SendKeys(C("#api-key"), "ka"), chromedp.Click(C("#signin-button")),
		chromedp.WaitVisible(C("#app")), poll(`document.querySelectorAll("#skill option").length > 1`),
		chromedp.WaitVisible(C(".welcome .example")), shot("1-signed-in"))
	// The welcome offers the skill's own example questions: the demo
	// theme's first eval questions, which vibe integrate put in SKILL.md.
	if w := text(".welcome"); !strings.Contains(w, "Can I make green tea with water straight off the boil?") {
		t.Errorf("the welcome shows %q", w)
	}

	// Pick the demo skill, ask, and watch the answer stream in with its card.
	step("ask", chromedp.SetValue(C("#skill"), "demo"), chromedp.SendKeys(C("#input"), "How hot should the water be for green tea in a 300 ml glass?"),
		chromedp.Click(C("#send")),
		chromedp.WaitVisible(C(`.card[data-card-type="brew_card"]`)),
		poll(`[...document.querySelectorAll(".msg.assistant .body")].some(b => b.textContent.includes("never at a rolling boil"))`),
		// The source list is drawn when the turn's last event arrives,
		// which can come a moment after the text.
		poll(`document.querySelector(".msg.assistant .sources") !== null`),
		shot("2-answer-and-card"))
	if card := text(`.card[data-card-type="brew_card"]`); !strings.Contains(card, "°C") || !strings.Contains(card, " g") {
		t.Errorf("the brew card shows %q", card)
	}
	if b := text(".msg.assistant .body strong"); b != "300 ml" {
		t.Errorf("bold text: %q", b)
	}
	// The answer is Markdown rendered: a heading, a table, a list; one
	// source list; no citation button inside the link whose URL holds
	// [R001]; the card laid out by the demo skill's own template.
	type answerShape struct {
		Heading, Rows, Items, SourceLists, CitesInLinks int
		Link                                            string
		Card                                            string
		Tiles                                           int
		CardCite                                        bool
	}
	shape := eval[answerShape](br, `(() => {
			const m = document.querySelector(".msg.assistant");
			const card = m.querySelector('.card[data-card-type="brew_card"]');
			const a = m.querySelector(".body a");
			return {Heading: m.querySelectorAll(".body h4").length, Rows: m.querySelectorAll(".body table tbody tr").length,
				Items: m.querySelectorAll(".body ul li").length, SourceLists: m.querySelectorAll(".sources").length,
				CitesInLinks: m.querySelectorAll(".body a .cite, .body a button").length, Link: a ? a.getAttribute("href") : "",
				Card: card.dataset.template || "", Tiles: card.querySelectorAll(".stat").length,
				CardCite: card.querySelectorAll(".card-sources .cite").length === 1};
		})()`)
	if shape.Heading != 1 || shape.Rows != 2 || shape.Items != 2 || shape.SourceLists != 1 || shape.CitesInLinks != 0 ||
		shape.Link != "https://example.org/guide[R001]" || shape.Card != "stats" || shape.Tiles < 3 || !shape.CardCite {
		t.Errorf("the answer as rendered: %+v", shape)
	}

	// Open the citation: the source panel shows the passage's heading path
	// with the passage highlighted.
	barH := eval[float64](br, `document.querySelector(".topbar").getBoundingClientRect().height`)
	step("open a citation", chromedp.Click(C(".msg.assistant .body .cite")), chromedp.WaitVisible(C("#panel")),
		chromedp.WaitVisible(C("#panel-body mark")), shot("3-citation"))
	if p := text("#panel-body"); !strings.Contains(p, "75 to 80 °C") {
		t.Errorf("the source panel shows %q", p)
	}
	// With the panel open the top bar keeps its one line.
	if h := eval[float64](br, `document.querySelector(".topbar").getBoundingClientRect().height`); h > barH+1 {
		t.Errorf("the top bar is %.0f px high with the panel open, %.0f without: it wraps", h, barH)
	}

	// Copy, regenerate, edit: the last answer is replaced in place, and
	// the history the model and the server keep loses the replaced one.
	step("copy", chromedp.Click(C("#panel-close")), chromedp.Click(C(".msg.assistant .act.copy")),
		poll(`document.querySelector(".msg.assistant .act.copy").textContent === "Copied"`))
	step("regenerate", chromedp.Click(C(".msg.assistant .act.regenerate")),
		poll(`[...document.querySelectorAll(".msg.assistant .body")].some(b => b.textContent.includes("(answer 2)"))`),
		poll(`document.querySelector(".msg.assistant .act.regenerate") !== null`), shot("3b-regenerated"))
	if n := eval[int](br, `document.querySelectorAll("#messages .msg").length`); n != 2 {
		t.Errorf("after regenerate the chat shows %d messages, want the question and its new answer", n)
	}
	step("edit", chromedp.Click(C(".msg.user .act.edit")), chromedp.WaitVisible(C("#editing")),
		poll(`document.getElementById("input").value.startsWith("How hot")`),
		js(`document.getElementById("input").value = ""`),
		chromedp.SendKeys(C("#input"), "How hot should the water be for green tea in a 300 ml cup?"), chromedp.Click(C("#send")),
		poll(`[...document.querySelectorAll(".msg.assistant .body")].some(b => b.textContent.includes("(answer 3)"))`),
		poll(`document.getElementById("editing").hidden`),
		// The answer's text streams before the turn is saved; Regenerate
		// comes back once the turn has ended (and is saved).
		poll(`document.querySelector(".msg.assistant .act.regenerate") !== null`))
	edited := eval[string](br, `document.querySelector(".msg.assistant")._answer.conv`)
	hist := getJSON(t, ts.URL+"/api/conversations/"+edited, "ka")
	var shown []string
	for _, m := range hist["messages"].([]any) {
		mm := m.(map[string]any)
		shown = append(shown, fmt.Sprint(mm["role"], ": ", mm["content"]))
	}
	if len(shown) != 2 || !strings.Contains(shown[0], "300 ml cup?") || !strings.Contains(shown[1], "(answer 3)") {
		t.Errorf("the conversation after regenerate and edit: %q", shown)
	}
	for _, r := range fake.Requests() {
		if strings.Contains(r.LastUserMessage(), "300 ml cup?") {
			for _, m := range r.Messages {
				if strings.Contains(m.Content, "(answer 1)") || strings.Contains(m.Content, "(answer 2)") || strings.Contains(m.Content, "300 ml glass?") {
					t.Errorf("the edited question's request carries a replaced message: %.80q", m.Content)
				}
			}
		}
	}

	// Feedback: thumbs down with a comment, stored with the answer.
	step("thumbs down", chromedp.Click(C(".msg.assistant .act.thumb.down")), chromedp.WaitVisible(C(".feedback-form textarea")),
		chromedp.SendKeys(C(".feedback-form textarea"), "It should say how long to steep."), chromedp.Click(C(".feedback-form button")),
		chromedp.WaitVisible(C(".feedback-done")), shot("3c-feedback"))
	if p := eval[string](br, `document.querySelector(".msg.assistant .act.thumb.down").getAttribute("aria-pressed")`); p != "true" {
		t.Errorf("the thumbs-down button is not shown pressed: %q", p)
	}
	hist = getJSON(t, ts.URL+"/api/conversations/"+edited, "ka")
	fbs := fmt.Sprint(dig(hist["messages"].([]any)[1], "feedback", "rating"), " ", dig(hist["messages"].([]any)[1], "feedback", "comment"))
	if fbs != "down It should say how long to steep." {
		t.Errorf("stored feedback: %q", fbs)
	}

	// A form: filled and submitted as a structured answer that lands in the profile.
	step("ask for a form", chromedp.SendKeys(C("#input"), "Please remember my birth date"), chromedp.Click(C("#send")),
		chromedp.WaitVisible(C(`.form-card input[name="identity.birth_info.date"]`)), shot("4-form"))
	step("fill the form", chromedp.SetValue(C(`.form-card input[name="identity.birth_info.date"]`), "1990-05-01"),
		chromedp.SendKeys(C(`.form-card input[name="identity.name"]`), "Alice"),
		chromedp.Click(C(`.form-card button[type="submit"]`)),
		poll(`[...document.querySelectorAll(".msg.assistant .body")].some(b => b.textContent.includes("saved your birth date 1990-05-01"))`),
		shot("5-form-submitted"))
	var last llmtest.Request
	for _, r := range fake.Requests() {
		if strings.HasPrefix(r.LastUserMessage(), runtime.FormMarker) {
			last = r
		}
	}
	var formMsg map[string]any
	if err := json.Unmarshal([]byte(strings.TrimPrefix(last.LastUserMessage(), runtime.FormMarker)), &formMsg); err != nil {
		t.Fatalf("the model did not receive the form as structured data: %q", last.LastUserMessage())
	}
	prof := getJSON(t, ts.URL+"/api/profile", "ka")
	if got := fmt.Sprint(dig(prof, "profile", "identity", "birth_info", "date")); got != "1990-05-01" {
		t.Fatalf("profile after the form: %v", prof)
	}
	step("see the profile", chromedp.Click(C("#profile-button")), chromedp.WaitVisible(C("#profile-table")), shot("6-profile"))
	if p := text("#profile-table"); !strings.Contains(p, "identity.birth_info.date") || !strings.Contains(p, "Alice") {
		t.Errorf("the profile panel shows %q", p)
	}

	// Model output cannot run script nor carry javascript: links.
	type xssProbe struct {
		Flag    any  `json:"flag"`
		Scripts int  `json:"scripts"`
		JSLinks int  `json:"jsLinks"`
		Safe    bool `json:"safe"`
	}
	step("script in model output", chromedp.Click(C("#panel-close")), chromedp.SendKeys(C("#input"), "xss test"), chromedp.Click(C("#send")),
		poll(`[...document.querySelectorAll(".msg.assistant .body")].some(b => b.textContent.includes("click me"))`),
		chromedp.Sleep(300*time.Millisecond))
	xss, err := chromedp.Run(ctx, chromedp.Evaluate[xssProbe](`({flag: window.__xss === undefined ? null : window.__xss,
			scripts: document.querySelectorAll("#messages script, #messages img").length,
			jsLinks: [...document.querySelectorAll("#messages a")].filter(a => !/^https?:/.test(a.href)).length,
			safe: [...document.querySelectorAll("#messages a")].some(a => a.href === "https://example.org/tea")})`))
	if err != nil {
		t.Fatal(err)
	}
	if xss.Flag != nil || xss.Scripts != 0 || xss.JSLinks != 0 || !xss.Safe {
		t.Errorf("model output ran or kept unsafe markup: %+v", xss)
	}

	// Reload the page and reopen the conversation: from the server's
	// history, each answer shows again what it showed live: the brew card,
	// its sources (a citation opens the passage, known from the stored
	// citations alone, as this page load retrieved nothing), and the form,
	// answered: read-only, with the values sent.
	step("the conversation is listed", poll(`document.querySelectorAll("#conversations button.current").length === 1`))
	conv, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("#conversations button.current").dataset.conversation`))
	if err != nil {
		t.Fatal(err)
	}
	convButton := C(`#conversations button[data-conversation="` + conv + `"]`)
	step("reload", chromedp.Reload(), chromedp.WaitVisible(C("#app")), chromedp.WaitVisible(convButton),
		poll(`document.querySelectorAll("#messages .msg").length === 0`))
	step("reopen the conversation", chromedp.Click(convButton),
		chromedp.WaitVisible(C(`.card[data-card-type="brew_card"]`)),
		chromedp.WaitVisible(C(`.msg.assistant .sources .cite`)),
		chromedp.WaitVisible(C(`.form-card.submitted`)), shot("8-reloaded"))
	if card := text(`.card[data-card-type="brew_card"]`); !strings.Contains(card, "°C") || !strings.Contains(card, " g") {
		t.Errorf("the reloaded brew card shows %q", card)
	}
	type formState struct {
		Cards    int    `json:"cards"`
		Forms    int    `json:"forms"`
		Date     string `json:"date"`
		Name     string `json:"name"`
		Disabled bool   `json:"disabled"`
		Answer   bool   `json:"answer"`
	}
	fs, err := chromedp.Run(ctx, chromedp.Evaluate[formState](`(() => {
			const f = document.querySelector(".form-card");
			const date = f.querySelector('input[name="identity.birth_info.date"]'), name = f.querySelector('input[name="identity.name"]');
			return {cards: document.querySelectorAll('.card[data-card-type="brew_card"]').length,
				forms: document.querySelectorAll(".form-card").length, date: date.value, name: name.value,
				disabled: date.disabled && name.disabled && f.querySelector('button[type="submit"]').disabled,
				answer: [...document.querySelectorAll(".msg.user")].some(m => m.textContent === "Form: Birth date: 1990-05-01, Name: Alice")};
		})()`))
	if err != nil {
		t.Fatal(err)
	}
	if fs != (formState{Cards: 1, Forms: 1, Date: "1990-05-01", Name: "Alice", Disabled: true, Answer: true}) {
		t.Errorf("the reloaded conversation's card and form: %+v", fs)
	}
	// The replaced answers stay out, and the verdict given shows again.
	type reloaded struct {
		Answers         []string
		Pressed, Turned int
	}
	rl := eval[reloaded](br, `({Answers: [...document.querySelectorAll(".msg.assistant .body")].map(b => (b.textContent.match(/\(answer \d\)/) || [""])[0]).filter(Boolean),
			Pressed: document.querySelectorAll('.msg.assistant .thumb.down[aria-pressed="true"]').length,
			Turned: document.querySelectorAll(".msg.assistant .thumb.up").length})`)
	if strings.Join(rl.Answers, ",") != "(answer 3)" || rl.Pressed != 1 || rl.Turned < 3 {
		t.Errorf("the reloaded conversation: %+v", rl)
	}
	step("open a reloaded citation", chromedp.Click(C(".msg.assistant .body .cite")), chromedp.WaitVisible(C("#panel")),
		chromedp.WaitVisible(C("#panel-body mark")), shot("9-reloaded-citation"))
	if p := text("#panel-body"); !strings.Contains(p, "75 to 80 °C") || strings.Contains(p, "not retrieved") {
		t.Errorf("the reloaded source panel shows %q", p)
	}
	step("close the panel", chromedp.Click(C("#panel-close")))

	// The conversation list is per user: alice sees hers, bob none of them.
	step("alice's conversations", poll(`document.querySelectorAll("#conversations li").length >= 1`))
	listed := func() []string {
		t.Helper()
		ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#conversations button")].map(b => b.dataset.conversation)`))
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	aliceConvs := listed()
	step("sign in as bob", chromedp.Click(C("#signout")), chromedp.WaitVisible(C("#signin-form")), chromedp.SendKeys(C("#api-key"), "kb"),
		chromedp.Click(C("#signin-button")), chromedp.WaitVisible(C("#app")),
		chromedp.SendKeys(C("#input"), "Hello, this is Bob"), chromedp.Click(C("#send")),
		// Wait for the conversation he just had to be listed and marked:
		// his list may already hold conversations of other tests (the
		// workspace is shared), so "a row is there" is not enough.
		poll(`document.querySelectorAll("#conversations button.current").length >= 1`), shot("7-other-user"))
	bobConvs := listed()
	for _, b := range bobConvs {
		for _, a := range aliceConvs {
			if a == b {
				t.Errorf("bob's list shows alice's conversation %s", a)
			}
		}
	}
	// The demo workspace is shared with other tests, where bob chats too:
	// his list holds the conversation he just had, and nothing of alice's.
	current, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#conversations button.current").length`))
	if err != nil || current != 1 || len(bobConvs) == 0 {
		t.Errorf("bob's list %v does not mark his conversation (%d current, %v)", bobConvs, current, err)
	}
	// And through the API: bob cannot read alice's history.
	req, _ := http.NewRequest("GET", ts.URL+"/api/conversations/"+aliceConvs[0], nil)
	req.Header.Set("Authorization", "Bearer kb")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("bob reading alice's conversation: %d", resp.StatusCode)
	}
	t.Logf("screenshots in %s", shots)
}

func getJSON(t *testing.T, url, key string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %s", url, b)
	}
	return m
}

func dig(m any, path ...string) any {
	for _, p := range path {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = mm[p]
	}
	return m
}

// The page is served with a strict CSP and no inline script, and its
// endpoints need the API key.
func TestChatPageHeadersAndAuth(t *testing.T) {
	ts := demoServer(t, map[string]string{})
	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Fatalf("status %d, CSP %q", resp.StatusCode, csp)
	}
	if strings.Contains(string(body), "<script>") || !strings.Contains(string(body), `src="/ui/app.js"`) {
		t.Errorf("the page carries inline script or lacks app.js")
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS is on by default")
	}
	for _, p := range []string{"/ui/app.js", "/ui/app.css"} {
		r, err := http.Get(ts.URL + p)
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("%s: %v %v", p, err, r.StatusCode)
		}
		r.Body.Close()
	}
	for _, p := range []string{"/api/profile", "/api/conversations"} {
		r, _ := http.Get(ts.URL + p)
		if r.StatusCode != 401 {
			t.Errorf("%s without a key: %d", p, r.StatusCode)
		}
		r.Body.Close()
	}
	// Profile writes are validated and versioned; clearing empties it.
	put := func(body string) (int, map[string]any) {
		req, _ := http.NewRequest("PUT", ts.URL+"/api/profile", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer kb")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, m := put(`{"fields":{"identity.city":"Hangzhou","preferences.tea":"oolong"}}`); code != 200 || m["version"] == nil {
		t.Fatalf("put: %d %v", code, m)
	}
	for _, bad := range []string{`{"fields":{"skill_data.demo.x":1}}`, `{"fields":{"a..b":1}}`, `{"fields":{}}`, `{"fields":{"__proto__.x":1}}`} {
		if code, m := put(bad); code != 400 {
			t.Errorf("put %s: %d %v", bad, code, m)
		}
	}
	if p := getJSON(t, ts.URL+"/api/profile", "kb"); dig(p, "profile", "identity", "city") != "Hangzhou" {
		t.Fatalf("profile: %v", p)
	}
	req, _ := http.NewRequest("DELETE", ts.URL+"/api/profile", nil)
	req.Header.Set("Authorization", "Bearer kb")
	if r, err := http.DefaultClient.Do(req); err != nil || r.StatusCode != 200 {
		t.Fatalf("delete: %v", err)
	}
	if p := getJSON(t, ts.URL+"/api/profile", "kb"); len(p["profile"].(map[string]any)) != 0 {
		t.Fatalf("after clearing: %v", p)
	}
}

// insecureDemoServer is vibe serve --insecure-dev over the demo workspace,
// with no model: retrieval-only answers.
func insecureDemoServer(t *testing.T) *httptest.Server {
	t.Helper()
	ws := demoWorkspace(t)
	ios, _, _, errOut := iostreams.Test()
	a := &app{io: ios, getenv: func(string) string { return "" }, now: time.Now, workspaceDir: ws}
	srv, _, closeServer, err := a.newServer(context.Background(), &ServeOptions{IO: ios, InsecureDev: true})
	if err != nil {
		t.Fatalf("%v: %s", err, errOut.String())
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() { ts.Close(); closeServer() })
	return ts
}

// TestChatPageInsecureOfflineInChromium: under --insecure-dev the sign-in
// says any key works; the welcome's example question asked in
// retrieval-only mode gives an answer in the question's language (no
// Chinese label on the English demo skill), rendered as Markdown, listing
// its rules and passages once; the favicon is served.
func TestChatPageInsecureOfflineInChromium(t *testing.T) {
	ts := insecureDemoServer(t)
	br := newBrowser(t)
	resp, err := http.Get(ts.URL + "/favicon.ico")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/favicon.ico: %v %v", err, resp.StatusCode)
	}
	resp.Body.Close()
	br.step("open the page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(C("#signin-hint")), br.shot("0-insecure-dev-sign-in"))
	if h := br.text("#signin-hint"); !strings.Contains(h, "any key") {
		t.Errorf("the hint says %q", h)
	}
	br.step("sign in with any key", chromedp.SendKeys(C("#api-key"), "whatever"), chromedp.Click(C("#signin-button")),
		chromedp.WaitVisible(C(".welcome .example")), poll(`document.getElementById("mode").textContent.includes("retrieval-only")`))
	// The English example: the answer's labels are in the question's language.
	br.step("ask an example question", js(`[...document.querySelectorAll(".welcome .example")].find(b => b.textContent.startsWith("Can I make green tea")).click()`),
		poll(`document.querySelectorAll(".msg.assistant .actions .act").length > 0`),
		chromedp.WaitVisible(C(".msg.assistant .body li .cite")), br.shot("10-retrieval-only-answer"))
	type offlineShape struct {
		Text        string
		Lists       int
		Items       int
		SourceLists int
		Bold        []string
		Mode        float64
	}
	got := eval[offlineShape](br, `(() => {
			const m = document.querySelector(".msg.assistant");
			return {Text: m.querySelector(".body").textContent, Lists: m.querySelectorAll(".body ul").length,
				Items: m.querySelectorAll(".body li").length, SourceLists: m.querySelectorAll(".sources").length,
				Bold: [...m.querySelectorAll(".body strong")].map(b => b.textContent),
				Mode: document.querySelector(".topbar").getBoundingClientRect().height};
		})()`)
	if strings.Contains(got.Text, "相关规则") || strings.Contains(got.Text, "技能") || strings.Contains(got.Text, "##") ||
		!strings.Contains(got.Text, "Retrieval-only mode") || got.Lists < 1 || got.Items < 2 || got.SourceLists != 0 || len(got.Bold) == 0 {
		t.Errorf("the retrieval-only answer as rendered: %+v", got)
	}
	br.step("open a source", chromedp.Click(C(".msg.assistant .body li .cite")), chromedp.WaitVisible(C("#panel")), br.shot("11-retrieval-only-source"))
	if h := eval[float64](br, `document.querySelector(".topbar").getBoundingClientRect().height`); h > got.Mode+1 {
		t.Errorf("the top bar is %.0f px high with the panel open, %.0f without: it wraps", h, got.Mode)
	}
	// The panel shows the passage whole (GET /api/passage), not the start
	// the citation carries.
	id := eval[string](br, `document.querySelector(".msg.assistant .body li .cite").dataset.cite`)
	whole := getJSON(t, ts.URL+"/api/passage?id="+url.QueryEscape(id), "any")
	text, _ := whole["text"].(string)
	panel := eval[string](br, `document.querySelector("#panel-body .passage").textContent`)
	if text == "" || strings.HasSuffix(panel, "…") || !strings.Contains(strings.Join(strings.Fields(panel), " "), strings.Join(strings.Fields(text[strings.LastIndex(text, "\n")+1:]), " ")) {
		t.Errorf("the panel shows %q of the passage %q", panel, text)
	}
	for q, code := range map[string]int{"": 400, "?id=c_0000000000000000": 404} {
		req, _ := http.NewRequest("GET", ts.URL+"/api/passage"+q, nil)
		req.Header.Set("Authorization", "Bearer any")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != code {
			t.Errorf("/api/passage%s: %d, want %d", q, resp.StatusCode, code)
		}
	}
}

// TestChatPageSpeaksTheSkillsLanguage: over a skill written in Chinese
// (the runtime's test skill bazi) the page's labels are Chinese; a
// retrieval-only answer is labelled in the question's language.
func TestChatPageSpeaksTheSkillsLanguage(t *testing.T) {
	set, err := skills.Open(filepath.Join(demoRepo, "runtime", "testdata", "skills"), skills.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := runtime.New(runtime.Config{Skills: set, Memory: runtime.NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := runtime.NewServer(ag, runtime.ServerOptions{Insecure: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	br := newBrowser(t)
	br.step("sign in", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(C("#signin-form")), chromedp.SendKeys(C("#api-key"), "x"),
		chromedp.Click(C("#signin-button")), chromedp.WaitVisible(C(".welcome")))
	type labels struct{ Lang, Send, Welcome, NewChat string }
	got := eval[labels](br, `({Lang: document.documentElement.lang, Send: document.getElementById("send").textContent,
			Welcome: document.querySelector(".welcome h2").textContent, NewChat: document.getElementById("new-chat").textContent})`)
	if got != (labels{Lang: "zh-CN", Send: "发送", Welcome: "想了解什么？", NewChat: "+ 新对话"}) {
		t.Errorf("the page over a Chinese skill: %+v", got)
	}
	br.step("ask in Chinese", chromedp.SendKeys(C("#input"), "甲木生于寅月，健康如何"), chromedp.Click(C("#send")),
		poll(`document.querySelectorAll(".msg.assistant .actions .act").length > 0`), br.shot("12-chinese-skill"))
	if a := br.text(".msg.assistant .body"); !strings.Contains(a, "离线检索模式") || strings.Contains(a, "Retrieval-only") {
		t.Errorf("the answer to a Chinese question: %q", a)
	}
	if c := br.text(".msg.assistant .act.copy"); c != "复制" {
		t.Errorf("the copy button says %q", c)
	}
}
