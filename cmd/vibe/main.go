// Command vibe turns a pile of books on a theme into an expert skill an agent
// can use, and serves the agent that uses it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/vibelife/vibe/internal/iostreams"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, iostreams.System(), os.Args[1:], os.Getenv)
	stop()
	os.Exit(code)
}
