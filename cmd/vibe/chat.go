package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/runtime"
	"github.com/vibelife/vibe/skills"
)

// ChatOptions are the flags of `vibe chat`.
type ChatOptions struct {
	IO     *iostreams.IOStreams
	Skill  string
	Server string
	Key    string
	User   string
	// Message, when set, is sent as the only message: the answer is printed
	// and the command exits, with no prompt read from standard input.
	Message string
}

func newChatCmd(a *app) *cobra.Command {
	opts := &ChatOptions{IO: a.io}
	cmd := &cobra.Command{
		Use:   "chat [message]",
		Short: "Talk to the agent in the terminal (in-process or against vibe serve)",
		Long: `Chat with the agent in the terminal, one line per message; an empty line or
EOF ends. With a message argument, that message alone is sent, its answer
printed, and the command exits (the exit code says whether it failed).
Without --server the runtime runs in this process over the workspace's
skills; with --server URL it talks to a running vibe serve (key from --key
or VIBE_API_KEY).`,
		Example: `  vibe chat --skill bazi
  vibe chat --skill bazi "伤官见官会怎样"
  vibe chat --server http://127.0.0.1:8080 --key s3cret`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Message = strings.TrimSpace(args[0])
				if opts.Message == "" {
					return flagErrorf("the message is empty: give a question, or no argument to chat line by line")
				}
			}
			if opts.Key == "" {
				opts.Key = a.getenv("VIBE_API_KEY")
			}
			return a.runChat(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Skill, "skill", "", "activate this skill from the start")
	cmd.Flags().StringVar(&opts.Server, "server", "", "URL of a running vibe serve (default: in-process)")
	cmd.Flags().StringVar(&opts.Key, "key", "", "API key for --server (default VIBE_API_KEY)")
	cmd.Flags().StringVar(&opts.User, "user", "local", "user id for the in-process runtime")
	return cmd
}

func (a *app) runChat(ctx context.Context, opts *ChatOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	out := opts.IO.Out
	var turn func(msg string) error
	conv := fmt.Sprintf("cli-%d", a.now().UnixNano())
	if opts.Server == "" {
		ag, closer, err := a.newAgent(ctx)
		if err != nil {
			return err
		}
		defer closer()
		defer ag.Wait() // background summaries finish before the store closes
		if opts.Skill != "" {
			if err := checkLocalSkill(ag.Skills(), opts.Skill); err != nil {
				return err
			}
		}
		turn = func(msg string) error {
			failed := ""
			p := &chatPrinter{w: out}
			_, err := ag.Turn(ctx, runtime.TurnRequest{UserID: opts.User, ConversationID: conv, Message: msg, Skill: opts.Skill}, func(ev runtime.Event) error {
				p.print(ev)
				if ev.Type == runtime.EventError {
					failed = ev.Error
				}
				return nil
			})
			if err == nil && failed != "" {
				err = errors.New(failed)
			}
			return err
		}
	} else {
		base, err := chatServerURL(opts.Server)
		if err != nil {
			return err
		}
		c := &chatClient{base: base, key: opts.Key, http: http.DefaultClient}
		if err := c.preflight(ctx, opts.Skill); err != nil {
			return err
		}
		turn = func(msg string) error {
			return c.turn(ctx, out, runtime.ChatRequest{Message: msg, ConversationID: conv, Skill: opts.Skill})
		}
	}
	if opts.Message != "" {
		err := turn(opts.Message)
		var fatal *chatFatal
		if errors.As(err, &fatal) {
			return fatal.err
		}
		if err != nil {
			return withExit(exitFailure, fmt.Errorf("chat: %w", err))
		}
		return nil
	}
	in := bufio.NewScanner(opts.IO.In)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	failed, turns := 0, 0
	done := func(err error) error {
		if err != nil {
			return err
		}
		if failed > 0 {
			return withExit(exitFailure, fmt.Errorf("chat: %d of %d messages failed (see the errors above)", failed, turns))
		}
		return nil
	}
	for {
		fmt.Fprint(out, "> ")
		if !in.Scan() {
			fmt.Fprintln(out)
			return done(in.Err())
		}
		msg := strings.TrimSpace(in.Text())
		if msg == "" {
			return done(nil)
		}
		turns++
		if err := turn(msg); err != nil {
			var fatal *chatFatal
			if errors.As(err, &fatal) {
				return fatal.err
			}
			failed++
			fmt.Fprintf(opts.IO.ErrOut, "error: %v\n", err)
		}
	}
}

// checkLocalSkill reports an unknown --skill before the first message, with
// the names that exist.
func checkLocalSkill(set *skills.Set, name string) error {
	if _, err := set.Get(name); err == nil && name != skills.CoreName {
		return nil
	}
	var names []string
	for _, h := range set.Headers() {
		if h.Name != skills.CoreName {
			names = append(names, h.Name)
		}
	}
	hint := "build one with `vibe build <theme>`; skills are read from " + set.Root()
	if len(names) > 0 {
		hint = "known skills: " + strings.Join(names, ", ")
	}
	return withHint(flagErrorf("--skill %q: no such skill", name), hint)
}

// chatServerURL checks --server: an absolute http(s) URL with a host.
func chatServerURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		guess := "http://" + strings.TrimPrefix(strings.TrimPrefix(raw, "//"), "://")
		return "", withHint(flagErrorf("--server %q: not an http:// or https:// URL", raw), "pass the address vibe serve printed, e.g. --server "+guess)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// chatFatal marks an error that ends the chat at once (no server, refused
// key, unknown skill): every later message would fail the same way.
type chatFatal struct{ err error }

func (e *chatFatal) Error() string { return e.err.Error() }
func (e *chatFatal) Unwrap() error { return e.err }

// chatClient talks to a running vibe serve.
type chatClient struct {
	base, key string
	http      *http.Client
}

func (c *chatClient) do(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &chatFatal{withHint(fmt.Errorf("chat %s: %w", c.base+path, err), "start `vibe serve` (it prints its address), or pass --server with the address it listens on")}
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	msg := strings.TrimSpace(string(b))
	var apiErr struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &apiErr) == nil && apiErr.Error.Message != "" {
		msg = apiErr.Error.Message
	}
	err = fmt.Errorf("chat %s: HTTP %d: %s", c.base+path, resp.StatusCode, msg)
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		hint := "pass --key KEY or set VIBE_API_KEY (a key from the file given to `vibe serve --keys`)"
		if c.key != "" {
			hint = "the key was refused: pass --key KEY or set VIBE_API_KEY to a key listed in the file given to `vibe serve --keys`"
		}
		return nil, &chatFatal{withHint(err, hint)}
	case http.StatusNotFound:
		return nil, &chatFatal{withHint(err, "`vibe chat --server URL` needs a vibe serve at URL; for a skill, GET /api/skills lists the names")}
	}
	return nil, err
}

// preflight checks the server, the key and the skill before the first
// message, so a mistake is reported at once with what to do.
func (c *chatClient) preflight(ctx context.Context, skill string) error {
	resp, err := c.do(ctx, http.MethodGet, "/api/skills", nil)
	if err != nil {
		var fatal *chatFatal
		if errors.As(err, &fatal) {
			return fatal.err
		}
		return err
	}
	defer resp.Body.Close()
	var list struct {
		Skills []skills.Header `json:"skills"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&list); err != nil {
		return withHint(fmt.Errorf("chat %s/api/skills: not a vibe serve answer: %w", c.base, err), "point --server at the address `vibe serve` printed")
	}
	if skill == "" {
		return nil
	}
	var names []string
	for _, h := range list.Skills {
		if h.Name == skill && skill != skills.CoreName {
			return nil
		}
		if h.Name != skills.CoreName {
			names = append(names, h.Name)
		}
	}
	return withHint(flagErrorf("--skill %q: %s has no such skill", skill, c.base), "skills it serves: "+strings.Join(names, ", "))
}

func (c *chatClient) turn(ctx context.Context, out io.Writer, cr runtime.ChatRequest) error {
	body, _ := json.Marshal(cr)
	resp, err := c.do(ctx, http.MethodPost, "/api/chat", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	failed := ""
	p := &chatPrinter{w: out}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev runtime.Event
			if json.Unmarshal([]byte(d), &ev) == nil {
				p.print(ev)
				if ev.Type == runtime.EventError {
					failed = ev.Error
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if failed != "" {
		return errors.New(failed)
	}
	return nil
}

// chatPrinter prints a turn's events in the terminal: the answer as it
// streams, tool calls, cards and forms, and after the answer its sources
// (the citations event) as the web page lists them.
type chatPrinter struct {
	w io.Writer
	// offline is set once the answer is a retrieval-only one, which lists
	// its rules and passages itself.
	offline bool
	started bool
}

func (p *chatPrinter) print(ev runtime.Event) {
	w := p.w
	switch ev.Type {
	case runtime.EventContent:
		if !p.started && (strings.HasPrefix(ev.Content, runtime.OfflineLabel) || strings.HasPrefix(ev.Content, runtime.OfflineLabelZH)) {
			p.offline = true
		}
		p.started = true
		fmt.Fprint(w, ev.Content)
	case runtime.EventToolCall:
		fmt.Fprintf(w, "\n  [tool %s %s]\n", ev.Tool, ev.Args)
	case runtime.EventCard:
		fmt.Fprintf(w, "\n  [card %s] %s\n", ev.CardType, ev.Props)
	case runtime.EventForm:
		fmt.Fprintf(w, "\n  [form] %s\n", ev.Form)
	case runtime.EventCitations:
		if !p.offline {
			fmt.Fprint(w, sourcesText(ev.Citations))
		}
	case runtime.EventCorrection:
		fmt.Fprintf(w, "\n  [corrected] %s\n", ev.Content)
	case runtime.EventJudge:
		if line := judgeLine(ev.Judge); line != "" {
			fmt.Fprint(w, line)
		}
	case runtime.EventError:
		fmt.Fprintf(w, "\n  [error] %s\n", ev.Error)
	case runtime.EventDone:
		fmt.Fprintln(w)
		p.offline, p.started = false, false
	}
}

// judgeLine says what the judge did to the answer ("" when it passed it
// as drafted).
func judgeLine(j *runtime.Judgement) string {
	if j == nil || !j.Rewritten {
		return ""
	}
	n := map[string]int{}
	for _, c := range j.Claims {
		n[c.Verdict]++
	}
	return fmt.Sprintf("\n  [checked against its sources: %d unsupported and %d unsafe claims rewritten before you read it]\n",
		n[runtime.VerdictUnsupported], n[runtime.VerdictUnsafe])
}

// maxSources bounds the sources listed after an answer.
const maxSources = 12

// sourcesText lists an answer's sources: the ones the answer cites, else
// (an answer naming none) the ones it consulted; a rule with its id and
// text and where it comes from, a passage with its chunk id, book ›
// heading and the start of its text. "" when there are none.
func sourcesText(cs []runtime.Citation) string {
	var cited []runtime.Citation
	for _, c := range cs {
		if c.Cited {
			cited = append(cited, c)
		}
	}
	head := "Sources / 出处:"
	if len(cited) == 0 {
		cited, head = cs, "Sources consulted / 参考的出处:"
	}
	seen := map[string]bool{}
	var lines []string
	for _, c := range cited {
		key := c.Kind + "|" + c.Skill + "|" + c.RuleID
		if c.Kind != "rule" {
			key += "|" + c.ChunkID
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		where := strings.Join(c.HeadingPath, " › ")
		if where == "" {
			where = c.Source
		}
		skill := ""
		if c.Skill != "" {
			skill = "[" + c.Skill + "] "
		}
		switch c.Kind {
		case "rule":
			text := c.Text
			if text == "" {
				text = c.Quote
			}
			lines = append(lines, fmt.Sprintf("  %s%s  %s (%s)", skill, c.RuleID, clipRunes(text, 160), where))
		default:
			lines = append(lines, fmt.Sprintf("  %s%s  %s: %s", skill, c.ChunkID, where, clipRunes(c.Quote, 100)))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	more := ""
	if len(lines) > maxSources {
		more = fmt.Sprintf("  (%d more)\n", len(lines)-maxSources)
		lines = lines[:maxSources]
	}
	return "\n\n" + head + "\n" + strings.Join(lines, "\n") + "\n" + more
}

// clipRunes shortens s to n runes, on one line.
func clipRunes(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return string(r)
}
