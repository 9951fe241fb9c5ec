package main

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/command"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/plugin"
)

// extFlags are the ways in for programs outside weft: handler commands
// that speak the command protocol, and webhooks that take page events.
type extFlags struct {
	handlers       []string
	handlerTimeout time.Duration
	handlerMemory  int64
	handlerProcs   int
	webhooks       []string
	webhookHeaders []string
	webhookGiveUp  time.Duration
}

func (f *extFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&f.handlers, "handler", nil, "TYPES=PROGRAM ARGS...: run PROGRAM (no shell) for each page of the media types TYPES (comma-separated: text/html, text/*, */*), speaking the command protocol on its stdin and stdout (docs/extensions.md): it gets the page's metadata and the file its body is in, and answers links, fields and decisions; the fields go in the page's event (repeatable)")
	fs.DurationVar(&f.handlerTimeout, "handler-timeout", command.DefaultTimeout, "longest wait for a --handler program's answer to one page; one that does not answer in time is killed and started again, the page counted as failed")
	fs.Var(bytesize.NewValueOrMinusOne(&f.handlerMemory, command.DefaultMaxMemory), "handler-memory", "address space each --handler program may use (RLIMIT_AS, Linux); -1: no cap")
	fs.IntVar(&f.handlerProcs, "handler-procs", 1, "copies of each --handler program run at once, each on one page at a time")
	fs.StringArrayVar(&f.webhooks, "webhook", nil, "POST each capture's event to this URL, as JSON Lines, batched, retried on 408, 429, 5xx and network errors; a slow endpoint slows the crawl, and one that fails past --webhook-give-up stops it, its events kept for the next run (repeatable)")
	fs.StringArrayVar(&f.webhookHeaders, "webhook-header", nil, "'Name: value' header sent with every --webhook POST, e.g. an Authorization (repeatable)")
	fs.DurationVar(&f.webhookGiveUp, "webhook-give-up", events.DefaultGiveUp, "how long a --webhook batch is retried before the crawl stops")
}

// handlerSpec is a --handler value, parsed.
type handlerSpec struct {
	types []string
	argv  []string
}

func parseHandler(v string) (handlerSpec, error) {
	types, prog, ok := strings.Cut(v, "=")
	var s handlerSpec
	for _, t := range strings.Split(types, ",") {
		if t = strings.TrimSpace(t); t != "" {
			s.types = append(s.types, t)
		}
	}
	s.argv = strings.Fields(prog)
	if !ok || len(s.types) == 0 || len(s.argv) == 0 {
		return s, usagef("--handler %q: want TYPES=PROGRAM ARGS..., e.g. text/html=python3 extract.py", v)
	}
	return s, nil
}

// check validates the flags without starting or opening anything.
func (f *extFlags) check() error {
	for _, h := range f.handlers {
		if _, err := parseHandler(h); err != nil {
			return err
		}
	}
	if f.handlerTimeout <= 0 || f.handlerProcs < 1 || f.handlerMemory == 0 || f.handlerMemory < -1 {
		return usagef("--handler-timeout must be positive, --handler-procs at least 1 and --handler-memory -1 or positive")
	}
	if _, err := f.header(); err != nil {
		return err
	}
	if f.webhookGiveUp <= 0 {
		return usagef("--webhook-give-up %v: must be positive", f.webhookGiveUp)
	}
	return nil
}

func (f *extFlags) header() (http.Header, error) {
	h := http.Header{}
	for _, v := range f.webhookHeaders {
		name, val, ok := strings.Cut(v, ":")
		if name = strings.TrimSpace(name); !ok || name == "" || strings.ContainsAny(name, " \\t") {
			return nil, usagef("--webhook-header %q: want 'Name: value'", v)
		}
		h.Add(name, strings.TrimSpace(val))
	}
	return h, nil
}

// commands makes a Handler of each --handler program; none starts before
// the crawl's first page of its types, and each is closed after the crawl
// (closeHandlers).
func (f *extFlags) commands(logger *slog.Logger) ([]plugin.Handler, error) {
	var hs []plugin.Handler
	for _, v := range f.handlers {
		s, err := parseHandler(v)
		if err != nil {
			return nil, err
		}
		h, err := command.New(command.Config{Argv: s.argv, MediaTypes: s.types, Timeout: f.handlerTimeout,
			MaxMemory: f.handlerMemory, Procs: f.handlerProcs, Logger: logger})
		if err != nil {
			return nil, usagef("--handler %q: %v", v, err)
		}
		for i, e := range hs {
			if plugin.NameOf(e, i) == h.Name() {
				return nil, usagef("--handler %q: a second handler named %s (each is counted by its program's name)", v, h.Name())
			}
		}
		hs = append(hs, h)
	}
	return hs, nil
}

// closeHandlers stops the --handler programs among hs, once the crawl is
// over.
func closeHandlers(hs []plugin.Handler) {
	for _, h := range hs {
		if c, ok := h.(*command.Handler); ok {
			c.Close()
		}
	}
}

// open adds a sink of each --webhook to cfg; the function it returns
// closes them.
func (f *extFlags) open(cfg *crawl.Config) (func(), error) {
	var closers []func() error
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	hdr, err := f.header()
	if err != nil {
		return closeAll, err
	}
	for _, u := range f.webhooks {
		w, err := events.NewWebhook(events.WebhookConfig{URL: u, Header: hdr, GiveUp: f.webhookGiveUp})
		if err != nil {
			return closeAll, usagef("--webhook: %v", err)
		}
		closers = append(closers, w.Close)
		cfg.Sinks = append(cfg.Sinks, w)
	}
	return closeAll, nil
}
