package weft

import (
	"log/slog"
	"time"

	"github.com/weft-crawler/weft/internal/command"
	"github.com/weft-crawler/weft/internal/content"
)

// CommandConfig describes a program that reads pages for a crawl through
// the command protocol: JSON lines on its standard input and output
// (docs/extensions.md).
type CommandConfig struct {
	// Argv is the program and its arguments, run directly (no shell).
	Argv []string
	// MediaTypes it reads: "text/html", "text/*" or "*/*".
	MediaTypes []string
	// Timeout bounds each answer; zero means 10 seconds. A program that
	// does not answer in time is killed and started again.
	Timeout time.Duration
	// MaxMemory caps each copy's address space in bytes (Linux); zero
	// means 1 GiB, negative no cap.
	MaxMemory int64
	// Procs is how many copies run at once; zero means 1.
	Procs int
	// Logger receives the program's standard error; nil discards it.
	Logger *slog.Logger
}

// Command is a Handler run by another program. Close it after Run.
type Command struct {
	h *command.Handler
}

// NewCommand checks cfg and finds the program; nothing starts before the
// first page.
func NewCommand(cfg CommandConfig) (*Command, error) {
	h, err := command.New(command.Config{Argv: cfg.Argv, MediaTypes: cfg.MediaTypes, Timeout: cfg.Timeout,
		MaxMemory: cfg.MaxMemory, Procs: cfg.Procs, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	return &Command{h: h}, nil
}

// Name is the program's base name: it counts the program's pages in the
// Summary.
func (c *Command) Name() string { return c.h.Name() }

// Accepts implements Handler.
func (c *Command) Accepts(mediaType string) bool { return c.h.Accepts(mediaType) }

// Handle implements Handler: it asks the program.
func (c *Command) Handle(r *Response) (Result, error) {
	truncated := ""
	if r.Truncated {
		truncated = "length"
	}
	x, err := c.h.Extend(content.Doc{URL: r.URL, MediaType: r.MediaType, Header: r.Header, Body: r.Body, Truncated: truncated})
	if err != nil {
		return Result{}, err
	}
	return Result{Links: x.Links, Fields: x.Fields, NoFollow: x.NoFollow}, nil
}

// Close stops the program's processes.
func (c *Command) Close() error { return c.h.Close() }
