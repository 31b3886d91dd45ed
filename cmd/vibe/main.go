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
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go interrupts(sigs, cancel, os.Stderr, os.Exit)
	code := run(ctx, iostreams.System(), os.Args[1:], os.Getenv)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}
