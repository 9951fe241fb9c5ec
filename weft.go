// Package weft is the Go API of the weft crawler: configure a crawl, add
// your own reading of pages, and run it.
//
// A crawl starts from seeds, obeys robots.txt and a per-host delay, never
// sends two requests to one host at once, archives every response as WARC
// under Config.DataDir and resumes after a crash, exactly as the weft
// command does. Four interfaces let a program take part:
//
//   - a Handler reads the responses of the media types it accepts, after
//     weft has read their links, and returns more links, fields it
//     extracted (a product's title and price) and decisions (follow the
//     page's links or not);
//   - a Consumer is given each fetched page once it is safely archived:
//     its body, its text, its links, the handlers' fields and where its
//     WARC record is;
//   - a LinkFilter accepts or refuses each URL found, with a reason that
//     the summary counts;
//   - a Scope says which URLs the crawl may go to at all.
//
// Programs in other languages plug in through NewCommand, which runs a
// program that speaks JSON lines on its standard input and output.
//
// The names of this package are kept stable: fields and methods may be
// added, none is removed or changed in meaning. Everything else in the
// module is internal.
package weft

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/plugin"
	"github.com/weft-crawler/weft/internal/scope"
)

// DefaultDelay is the least gap between two requests to one host when
// Config.Delay is zero.
const DefaultDelay = crawl.DefaultDelay

// DefaultMaxDepth is the most link hops from a seed when Config.MaxDepth is
// zero.
const DefaultMaxDepth = scope.DefaultMaxDepth

// Config describes a crawl. Seeds, DataDir and UserAgent are required;
// every other zero value means the documented default.
type Config struct {
	// Seeds are the absolute http or https URLs the crawl starts from.
	Seeds []string
	// DataDir holds the crawl: its state, its WARC files (DataDir/warc)
	// and its fetch log. A directory that holds a crawl is resumed unless
	// Fresh is set.
	DataDir string
	// UserAgent is sent with every request: name your crawler and a way to
	// reach you ("mybot/1.0 (+https://example.org/bot)"). Its first token
	// chooses the robots.txt group that applies.
	UserAgent string
	// Fresh starts over: a crawl state found under DataDir is removed (WARC
	// files are kept).
	Fresh bool

	// Delay is the least time between two requests to one host; a longer
	// robots.txt Crawl-delay wins. Zero means DefaultDelay.
	Delay time.Duration
	// Workers is the number of fetches at once (never two to one host);
	// zero means 16.
	Workers int
	// MaxPages stops the crawl after this many page fetches; zero means no
	// limit.
	MaxPages int64
	// MaxDepth is the most link hops from a seed; zero means
	// DefaultMaxDepth, negative no limit.
	MaxDepth int
	// Requisites also fetches what each HTML page needs to render (style
	// sheets, scripts, images, fonts), one hop past the scope, so that the
	// archive replays; their links are not followed.
	Requisites bool

	// Scope says which URLs the crawl goes to; nil means the seeds'
	// registrable domains (www.example.co.uk admits every host under
	// example.co.uk).
	Scope Scope
	// Filters judge every URL found within the scope, in order; the first
	// refusal counts.
	Filters []LinkFilter
	// Handlers read responses by media type, after weft's own reading.
	Handlers []Handler
	// Consumers are given every fetched page once it is archived.
	Consumers []Consumer

	// AllowNetworks are address ranges the crawl may connect to although
	// they are refused by default (loopback, private, link-local: a test
	// server on 127.0.0.1, an intranet).
	AllowNetworks []netip.Prefix
	// Resolve maps host names to addresses, instead of asking DNS.
	Resolve map[string]string
	// CAFiles are PEM files of certificate authorities trusted besides
	// the system's roots: a private CA. (The SSL_CERT_FILE variable
	// replaces the system's roots instead.)
	CAFiles []string
	// InsecureTLS names hosts fetched even when their TLS certificate
	// fails verification (an unknown authority, another host's name,
	// expired): a host, "*." and a domain for the hosts under it, an
	// address, or "*" for all. Each WARC record of such a fetch says why
	// the certificate failed (WARC-Certificate-Error). Nil, the default,
	// accepts no certificate that fails.
	InsecureTLS []string
	// Logger receives a line per failed item (a page that would not
	// parse, a handler that failed); nil discards them.
	Logger *slog.Logger
}

// Crawler runs one crawl. Make it with New and run it once with Run.
type Crawler struct {
	c *crawl.Crawler
}

// New checks cfg and opens the crawl's state under cfg.DataDir. An
// invalid seed or setting is an error that names it.
func New(cfg Config) (*Crawler, error) {
	cc, err := cfg.internal()
	if err != nil {
		return nil, err
	}
	c, err := crawl.New(cc)
	if err != nil {
		return nil, fmt.Errorf("weft: %w", err)
	}
	return &Crawler{c: c}, nil
}

// internal turns cfg into the crawl's own configuration.
func (cfg Config) internal() (crawl.Config, error) {
	if cfg.Delay < 0 {
		return crawl.Config{}, fmt.Errorf("weft: Delay %v is negative", cfg.Delay)
	}
	cc := crawl.Config{
		Seeds: cfg.Seeds, DataDir: cfg.DataDir, UserAgent: cfg.UserAgent, Fresh: cfg.Fresh,
		Delay: cfg.Delay, Workers: cfg.Workers, MaxPages: cfg.MaxPages, NoRequisites: !cfg.Requisites,
		Logger: cfg.Logger,
		// What this package has always meant by a zero field, where the
		// crawl's default is another.
		MaxURLsPerHost: -1, Render: crawl.RenderConfig{Mode: crawl.RenderNever},
	}
	cc.Scope.MaxDepth = cfg.MaxDepth
	cc.Fetch.AllowCIDRs = cfg.AllowNetworks
	cc.Fetch.Resolve = cfg.Resolve
	if len(cfg.CAFiles) > 0 {
		pool, err := fetch.LoadCAFiles(cfg.CAFiles...)
		if err != nil {
			return crawl.Config{}, fmt.Errorf("weft: CAFiles: %w", err)
		}
		cc.Fetch.TLSConfig = &tls.Config{RootCAs: pool}
	}
	for i, h := range cfg.InsecureTLS {
		if _, err := fetch.InsecureTLSKey(h); err != nil {
			return crawl.Config{}, fmt.Errorf("weft: InsecureTLS[%d] %q: %w", i, h, err)
		}
	}
	cc.Fetch.InsecureTLS = cfg.InsecureTLS
	if cfg.Scope != nil {
		// The scope decides which hosts and paths; weft's own rules
		// (scheme, length, extension, depth, repeated segments) still
		// apply.
		cc.Scope.Mode = scope.Any
		cc.Filters = append(cc.Filters, scopeFilter{cfg.Scope})
	}
	for i, f := range cfg.Filters {
		if f == nil {
			return crawl.Config{}, fmt.Errorf("weft: Filters[%d] is nil", i)
		}
		cc.Filters = append(cc.Filters, f)
	}
	names := map[string]int{}
	for i, h := range cfg.Handlers {
		if h == nil {
			return crawl.Config{}, fmt.Errorf("weft: Handlers[%d] is nil", i)
		}
		name := plugin.NameOf(h, i)
		if j, dup := names[name]; dup {
			return crawl.Config{}, fmt.Errorf("weft: Handlers[%d] and Handlers[%d] are both named %q", j, i, name)
		}
		names[name] = i
		cc.Extensions = append(cc.Extensions, h)
	}
	for i, c := range cfg.Consumers {
		if c == nil {
			return crawl.Config{}, fmt.Errorf("weft: Consumers[%d] is nil", i)
		}
		cc.Pages = append(cc.Pages, c)
	}
	if err := cc.Validate(); err != nil {
		return crawl.Config{}, fmt.Errorf("weft: %w", err)
	}
	return cc, nil
}

// Run crawls until nothing is left to fetch, MaxPages is reached or ctx is
// done, and returns what the crawl did. When ctx is done, fetches in
// flight get ten seconds to finish, the archive is closed, and the summary
// says "interrupted", which is not an error. An error is what stopped the
// crawl: the archive could not be written, or a Consumer failed. Run may
// be called once.
func (c *Crawler) Run(ctx context.Context) (Summary, error) {
	if c.c == nil {
		return Summary{}, errors.New("weft: Run called twice, or on a Crawler New did not make")
	}
	s, err := c.c.Run(ctx)
	c.c = nil
	return summaryOf(s), err
}

// Summary is what a crawl did.
type Summary struct {
	// StoppedBy is "drained" (nothing left), "max-pages", "interrupted"
	// (the context), "failed" (see Run's error) or "stopped".
	StoppedBy string `json:"stopped_by"`
	// Elapsed is written as elapsed_seconds (MarshalJSON).
	Elapsed time.Duration `json:"-"`
	// Pages counts page requests that got a response; Errors those that
	// did not, by kind ("timeout", "dns", ...).
	Pages  int64            `json:"pages"`
	Errors map[string]int64 `json:"errors"`
	// ByStatus counts responses by status class ("2xx", "4xx", ...).
	ByStatus map[string]int64 `json:"by_status"`
	// Rejected counts the URLs found and not queued, by reason: weft's
	// ("seen", "robots", "scope", ...) and the LinkFilters'.
	Rejected map[string]int64 `json:"rejected"`
	// Handled counts the documents each Handler read, by name, and
	// HandlerFailed those it failed on (an error, a panic, a timeout).
	Handled       map[string]int64 `json:"handled"`
	HandlerFailed map[string]int64 `json:"handler_failed"`
	// Queued is the URLs left queued (after MaxPages, or an interruption:
	// a later Run on the same DataDir takes them up).
	Queued int `json:"queued"`
	// WARCFiles are the archive's files, oldest first.
	WARCFiles []string `json:"warc_files"`

	full crawl.Summary
}

// MarshalJSON writes the summary with snake_case keys, as the weft
// command's --summary and GET /v1/stats do, Elapsed in seconds as
// elapsed_seconds.
func (s Summary) MarshalJSON() ([]byte, error) {
	type fields Summary // the tags, without this method
	return json.Marshal(struct {
		ElapsedSeconds float64 `json:"elapsed_seconds"`
		fields
	}{s.Elapsed.Seconds(), fields(s)})
}

func summaryOf(s crawl.Summary) Summary {
	return Summary{
		StoppedBy: s.StoppedBy, Elapsed: s.Elapsed, Pages: s.Pages, Errors: s.Errors, ByStatus: s.ByStatus,
		Rejected: s.Rejected, Handled: s.Extended, HandlerFailed: s.ExtensionFailed, Queued: s.Queued,
		WARCFiles: s.WARCFiles, full: s,
	}
}

// Write prints the summary as the weft command does, for a person.
func (s Summary) Write(w io.Writer) { s.full.Write(w) }
