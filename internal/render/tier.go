package render

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weft-crawler/weft/internal/report"
)

// The rendering modes (TierConfig.Mode).
const (
	Never  = "never"  // no browser
	Auto   = "auto"   // pages the rule picks (Signals), on hosts where rendering finds links
	Always = "always" // every HTML page fetched whole with a 2xx
)

// TierConfig turns on a crawl's rendering tier, headless Chromium:
// an HTML page is fetched and parsed as always, then loaded in a browser
// whose every request (scripts, XHR/fetch, images, fonts) goes through the
// crawl's own fetch path: under its host's clock (the page's own host
// under the page's lease, any other through frontier.Borrow), robots.txt,
// the operator's policy, the SSRF guard and the body caps, each archived
// with its exact bytes. The links of the settled DOM go through the same
// admission as the static ones; the DOM is archived beside the page's
// response, as a record named for it (urn:dom:). If the browser fails or
// overruns its budget, the page keeps its static links.
type TierConfig struct {
	Mode     string // Never, Auto (also "", the default) or Always
	Chromium string // the browser; "" looks for chromium on the PATH
	// Workers caps the browsers alive at once (each renders one page at
	// a time; a worker that needs one waits). Zero means 1.
	Workers int
	// Timeout is each page's time budget, its requests' waits for their
	// hosts' clocks included; zero means 30s. Idle is the quiet time
	// that counts as settled; zero means 500ms.
	Timeout, Idle time.Duration
	// MaxScrolls, MaxClicks and MaxNavigations bound the behaviours run
	// on a rendered page (Config's): scrolls to the bottom that grew
	// the page, clicks of controls that are not links, and navigations
	// of its scripts captured as its links. Zero means each one's
	// default (10, 20, 100), negative turns it off. BehaviourTime bounds
	// each behaviour's time on a page; zero means 10s.
	MaxScrolls, MaxClicks, MaxNavigations int
	BehaviourTime                         time.Duration
	// Screenshot archives a PNG of the settled page as a resource record.
	Screenshot bool
	// MemoryMB caps each browser's JavaScript heap; zero means 512,
	// negative leaves V8's.
	MemoryMB int
	// GiveUpAfter is, in auto mode, how many renders of a host in a row
	// that find no link the static parse did not must pass before the
	// host is rendered no more; zero means 3.
	GiveUpAfter int
}

// Validate checks the settings.
func (r TierConfig) Validate() error {
	switch r.Mode {
	case "", Never, Auto, Always:
	default:
		return fmt.Errorf("render: mode %q: want never, auto or always", r.Mode)
	}
	if r.Workers < 0 || r.Timeout < 0 || r.Idle < 0 || r.BehaviourTime < 0 || r.GiveUpAfter < 0 {
		return fmt.Errorf("render: settings must not be negative: %+v", r)
	}
	return nil
}

// Tier is a crawl's rendering tier: the pool of browsers, the auto
// mode's rule and what it learnt of each host, and the counts of the
// summary's render line, which the crawl's fetch path adds to. A nil
// Tier is rendering off.
type Tier struct {
	Pool   *Pool
	mode   string
	giveUp int
	log    *slog.Logger

	mu    sync.Mutex
	hosts map[string]hostRenders // auto mode's learning, bounded by maxTierHosts

	// What the crawl's renders did: pages rendered, renders that fell
	// back to static links, browser requests (of which recalled from the
	// archive, refused), requisites spared a fetch, new links.
	Pages, Fallbacks, Requests, Refused, NewLinks, Recalled, Spared atomic.Int64
	stopped                                                         atomic.Int64
}

// hostRenders is what rendering has taught about one host.
type hostRenders struct {
	barren   int  // renders in a row that found no new link
	fruitful bool // some render found a new link
}

// maxTierHosts bounds the hosts auto mode remembers; when full it
// forgets them all and learns again (memory bounded by configuration).
const maxTierHosts = 1 << 16

// NewTier starts the pool, or returns nil with the reason rendering is
// off (Chromium missing: the crawl goes on as never).
func NewTier(cfg TierConfig, log *slog.Logger) (*Tier, string) {
	if cfg.Mode == "" || cfg.Mode == Never {
		return nil, ""
	}
	pool, err := New(Config{
		Chromium: cfg.Chromium, Workers: cfg.Workers, Timeout: cfg.Timeout, Idle: cfg.Idle,
		MaxScrolls: cfg.MaxScrolls, MaxClicks: cfg.MaxClicks, MaxNavigations: cfg.MaxNavigations, BehaviourTime: cfg.BehaviourTime,
		Screenshot: cfg.Screenshot, MemoryMB: cfg.MemoryMB, Log: log,
	})
	if err != nil {
		why := err.Error()
		log.Warn("rendering is off: the crawl goes on as --render never", "mode", cfg.Mode, "err", err)
		return nil, why
	}
	giveUp := cfg.GiveUpAfter
	if giveUp == 0 {
		giveUp = 3
	}
	return &Tier{Pool: pool, mode: cfg.Mode, giveUp: giveUp, log: log, hosts: map[string]hostRenders{}}, ""
}

// Close stops the browsers.
func (r *Tier) Close() {
	if r != nil {
		r.Pool.Close()
	}
}

// Wants decides whether to render a page of host whose static HTML is
// body: as the host's operator policy says ("never", "always" or
// "auto"), else as the crawl's mode does: always in always mode; in auto
// mode, when the page looks as if scripts build it
// (Signals.NeedsScript) and its static links cannot be taken as
// complete. They are taken so by the test the host's own renders make
// (a render that finds no link its page's HTML did not have): after
// GiveUpAfter such renders in a row, and before any render, for a page
// with static navigation (Signals.Navigates: a documentation
// page's sidebar, whose theme and search scripts make no link). A host
// where one render found a new link is rendered for good.
func (r *Tier) Wants(host string, body []byte, policy string) bool {
	mode := r.mode
	if policy != "" {
		mode = policy
	}
	switch mode {
	case Never:
		return false
	case Always:
		return true
	}
	r.mu.Lock()
	h := r.hosts[host]
	r.mu.Unlock()
	if !h.fruitful && h.barren >= r.giveUp {
		return false
	}
	sig := Inspect(body)
	return sig.NeedsScript() && (h.fruitful || !sig.Navigates())
}

// Learn records what a render of host found.
func (r *Tier) Learn(host string, newLinks int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.hosts) >= maxTierHosts {
		clear(r.hosts)
	}
	h := r.hosts[host]
	if newLinks > 0 {
		h.fruitful, h.barren = true, 0
	} else {
		h.barren++
		if !h.fruitful && h.barren == r.giveUp && r.mode == Auto {
			r.stopped.Add(1)
			r.log.Info("render: host rendered no more: its renders found no link its HTML did not have", "host", host, "renders", h.barren)
		}
	}
	r.hosts[host] = h
}

// Summary is the summary's render line: what the tier did, or, for a
// nil tier of a crawl that asked for mode, why it was off.
func (r *Tier) Summary(mode, off string) *report.RenderSummary {
	if r == nil {
		if mode == "" || mode == Never {
			return nil
		}
		return &report.RenderSummary{Mode: Never, Off: off}
	}
	d := r.Pool.DeadEnds()
	return &report.RenderSummary{
		Mode: r.mode, Pages: r.Pages.Load(), Fallbacks: r.Fallbacks.Load(), Requests: r.Requests.Load(),
		Recalled: r.Recalled.Load(), Refused: r.Refused.Load(), Spared: r.Spared.Load(), NewLinks: r.NewLinks.Load(), HostsStopped: r.stopped.Load(),
		Escapes: d.Pages, BrowserConns: d.Browser, BrowserTargets: d.Targets, Restarts: r.Pool.Restarts(),
	}
}
