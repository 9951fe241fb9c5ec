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
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/report"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/settings"
)

// DefaultDelay is the least gap between two requests to one host when
// Config.Delay is zero.
const DefaultDelay = crawl.DefaultDelay

// DefaultMaxDepth is the most link hops from a seed when Config.MaxDepth is
// zero.
const DefaultMaxDepth = scope.DefaultMaxDepth

// Config describes a crawl. Seeds, DataDir and UserAgent are required;
// every other field left zero means its default, the weft command's (weft
// crawl -h lists them), and a setting on by default is turned off by a
// negative number (no limit, none, never) or a No... field. The command
// builds its crawls through a Config too, so each of its settings has a
// field here (a flag that says 0 for none is a negative field): a program
// can do anything the command can but serve the operator API (--http),
// join a cluster (--cluster) and write the command's outputs (--events,
// --webhook, --summary; a Consumer sees every page).
//
// Its fields are documented in package internal/settings, whose Config
// it is (go doc github.com/weft-crawler/weft/internal/settings.Config).
type Config = settings.Config

// SeedOptions are one seed's own limits (Config.SeedOptions): scope
// mode, most link hops, page budget, include and exclude expressions,
// each zero for the crawl's.
type SeedOptions = settings.SeedOptions

// FieldError is the error of a setting of a Config that is wrong: its
// Fields name it (more than one when they are wrong together).
type FieldError = settings.FieldError

// Crawler runs one crawl. Make it with New and run it once with Run.
// It is the engine's crawl itself, with this package's one method.
type Crawler crawl.Crawler

// New checks cfg and opens the crawl's state under cfg.DataDir. An
// invalid seed or setting is an error that names it.
func New(cfg Config) (*Crawler, error) {
	cc, err := settings.Crawl(cfg)
	if err != nil {
		return nil, fmt.Errorf("weft: %w", err)
	}
	c, err := crawl.New(cc)
	if err != nil {
		return nil, fmt.Errorf("weft: %w", err)
	}
	return (*Crawler)(c), nil
}

// Run crawls until nothing is left to fetch, MaxPages is reached or ctx is
// done, and returns what the crawl did. When ctx is done, fetches in
// flight get ten seconds to finish, the archive is closed, and the summary
// says "interrupted", which is not an error. An error is what stopped the
// crawl: the archive could not be written, or a Consumer failed. Run may
// be called once.
func (c *Crawler) Run(ctx context.Context) (Summary, error) {
	cc := (*crawl.Crawler)(c)
	if cc.Done() == nil { // made by New, a crawl has its Done; a zero one has none
		return Summary{}, errors.New("weft: Run called twice, or on a Crawler New did not make")
	}
	s, err := cc.Run(ctx)
	// Zero again: a second Run is refused, and the crawl's memory (its
	// seen set's filters, caches, queues) is let go although the caller
	// keeps c.
	*c = Crawler{}
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
	return report.WithElapsed(s.Elapsed, fields(s))
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
