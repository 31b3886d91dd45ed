package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vibelife/vibe/internal/iostreams"
	"github.com/vibelife/vibe/runtime"
)

// ChatOptions are the flags of `vibe chat`.
type ChatOptions struct {
	IO     *iostreams.IOStreams
	Skill  string
	Server string
	Key    string
	User   string
}

func newChatCmd(a *app) *cobra.Command {
	opts := &ChatOptions{IO: a.io}
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Talk to the agent in the terminal (in-process or against vibe serve)",
		Long: `Chat with the agent in the terminal, one line per message; an empty line or
EOF ends. Without --server the runtime runs in this process over the
workspace's skills; with --server URL it talks to a running vibe serve
(key from --key or VIBE_API_KEY).`,
		Example: `  vibe chat --skill bazi
  vibe chat --server http://127.0.0.1:8080 --key s3cret`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
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
		turn = func(msg string) error {
			_, err := ag.Turn(ctx, runtime.TurnRequest{UserID: opts.User, ConversationID: conv, Message: msg, Skill: opts.Skill}, func(ev runtime.Event) error {
				printEvent(out, ev)
				return nil
			})
			return err
		}
	} else {
		url := strings.TrimRight(opts.Server, "/") + "/api/chat"
		turn = func(msg string) error {
			body, _ := json.Marshal(runtime.ChatRequest{Message: msg, ConversationID: conv, Skill: opts.Skill})
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Content-Type", "application/json")
			if opts.Key != "" {
				req.Header.Set("Authorization", "Bearer "+opts.Key)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return withHint(fmt.Errorf("chat %s: %w", url, err), "is `vibe serve` running at --server?")
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
				return fmt.Errorf("chat %s: HTTP %d: %s", url, resp.StatusCode, bytes.TrimSpace(b))
			}
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					var ev runtime.Event
					if json.Unmarshal([]byte(d), &ev) == nil {
						printEvent(out, ev)
					}
				}
			}
			return sc.Err()
		}
	}
	in := bufio.NewScanner(opts.IO.In)
	in.Buffer(make([]byte, 64<<10), 1<<20)
	for {
		fmt.Fprint(out, "> ")
		if !in.Scan() {
			fmt.Fprintln(out)
			return in.Err()
		}
		msg := strings.TrimSpace(in.Text())
		if msg == "" {
			return nil
		}
		if err := turn(msg); err != nil {
			fmt.Fprintf(opts.IO.ErrOut, "error: %v\n", err)
		}
	}
}

func printEvent(w io.Writer, ev runtime.Event) {
	switch ev.Type {
	case runtime.EventContent:
		fmt.Fprint(w, ev.Content)
	case runtime.EventToolCall:
		fmt.Fprintf(w, "\n  [tool %s %s]\n", ev.Tool, ev.Args)
	case runtime.EventCard:
		fmt.Fprintf(w, "\n  [card %s] %s\n", ev.CardType, ev.Props)
	case runtime.EventForm:
		fmt.Fprintf(w, "\n  [form] %s\n", ev.Form)
	case runtime.EventError:
		fmt.Fprintf(w, "\n  [error] %s\n", ev.Error)
	case runtime.EventDone:
		fmt.Fprintln(w)
	}
}
