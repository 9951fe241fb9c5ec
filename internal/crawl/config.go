package crawl

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"reflect"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/content"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/extract"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/media"
	"github.com/weft-crawler/weft/internal/plugin"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/recrawl"
	"github.com/weft-crawler/weft/internal/render"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/simhash"
	"github.com/weft-crawler/weft/internal/warc"
)

// Config is everything one crawl needs. Seeds, DataDir and UserAgent are
// required. Every other field left zero means its default, which
// Defaults states; a setting on by default is turned off by a negative
// number (no limit, none) or a No... field. The weft package's Config and
// the weft command's flags mean the same by their zero values and
// defaults, which they take from Defaults too.
type Config struct {
	// Seeds are the URLs the crawl starts from, at High priority and depth 0.
	Seeds []string
	// Sitemaps are seeds that are sitemaps or sitemap indexes: fetched as
	// sitemaps, not pages, and every URL they list (through an index, its
	// sitemaps') is a seed. A seed of Seeds that answers with a sitemap
	// is read the same way.
	Sitemaps []string
	// SeedOptions are the limits of seeds that have their own, keyed by
	// the seed as given in Seeds or Sitemaps (package seeds: scope, depth,
	// page budget, include and exclude). A seed absent has the crawl's.
	SeedOptions map[string]seeds.Options
	// SitemapOnly crawls the seeds and the URLs their sitemaps list, with
	// their redirects and requisites, and follows no other link: no
	// page's links, no sitemap a robots.txt names.
	SitemapOnly bool
	// DataDir holds the crawl's output: warc/ and fetches.jsonl.
	DataDir string

	// Workers is the number of concurrent fetches. Politeness does not
	// depend on it: a host is never fetched twice at once.
	Workers int
	// MaxPages stops the crawl after this many page fetches; zero means
	// no limit. Requests that are not pages do not count: robots.txt,
	// requisites and sitemaps (MaxRequisites).
	MaxPages int64
	// MaxRequisites bounds the fetches of requisites and sitemaps, the
	// requests made for what a page needs or for the URLs a host lists;
	// past it they are dropped unrequested (judge.RequisiteBudget) and
	// the crawl goes on with pages. Zero means no limit: requisites are
	// found only on pages MaxPages lets through, so they are bounded by
	// it already, and a cap by default would leave archived pages that
	// replay without their images and style sheets.
	MaxRequisites int64
	// MaxURLsPerHost bounds the URLs accepted per host (a crawl-trap
	// guard); negative means no limit.
	MaxURLsPerHost int64
	// MaxURLsPerPattern bounds the URLs accepted per host for one URL
	// pattern (scope.Pattern: the path with its digits as "#" and its
	// generated tokens as "*", without the query), the guard against
	// calendars, faceted search, session ids in paths and endless page
	// numbers. Seeds are exempt; pages a sitemap lists are not (any XML
	// page can call itself a sitemap). Negative means no limit; at most
	// 65,000.
	MaxURLsPerPattern int
	// TrapBudget is the URLs a family (one path's query variants, one
	// dated path shape) may queue from its own pages before they have
	// shown their worth, growing as they do (judge.DefaultTrapBudget);
	// past it they are queued last. Negative means no budget.
	TrapBudget int
	// MaxRedirects bounds a redirect chain (each hop is enqueued for its
	// host like a link): a URL reached through more redirects than this is
	// not queued. Negative means none is followed. It does
	// not bound robots.txt, whose redirects are followed up to five hops
	// whatever it says (RFC 9309 asks for at least five).
	MaxRedirects int
	// MaxLinksPerPage is the most links read of one HTML page: past it the
	// rest is not read, and the page is logged and counted per host.
	MaxLinksPerPage int
	// Delay is the minimum gap between two requests to one host (from the end
	// of one to the start of the next); a host's Crawl-delay raises it.
	// Negative means no gap: for benchmarks against the synthetic web only.
	Delay time.Duration
	// UserAgent is sent with every request; its product token selects the
	// robots.txt group. Required.
	UserAgent string
	// RobotsTTL is how long a robots.txt answer is trusted (24h: RFC 9309
	// §2.4).
	RobotsTTL time.Duration
	// RobotsAttempts failed robots.txt fetches in a row (5xx, 429, network
	// error) make a host's robots.txt unreachable: its queue is dropped, as
	// completely disallowed, and the file is retried when new URLs come.
	// Before that the host's URLs wait and the file is fetched again after
	// RobotsRetryWait, doubled after each failure.
	RobotsAttempts  int
	RobotsRetryWait time.Duration
	// RobotsLastGood turns on Google's handling of an unreachable
	// robots.txt: the last good copy is used for up to this long after it
	// was fetched, and a file failing this long is treated as absent. Zero
	// keeps RFC 9309's complete disallow. Google uses 30 days.
	RobotsLastGood time.Duration
	// MaxCrawlDelay is the longest Crawl-delay the crawl waits between two
	// requests to a host: a host whose robots.txt asks for more is not
	// crawled, its queued URLs dropped and its links refused ("crawl-delay"),
	// as Nutch's fetcher.max.crawl.delay does, rather than requested sooner
	// than it asked. Negative honours any Crawl-delay, up to
	// robots.MaxCrawlDelay (30 days); so does zero in a continuous crawl.
	MaxCrawlDelay time.Duration
	// ExpectedURLs sizes the seen set's Bloom filters (1% false positives,
	// each one confirmed exactly).
	ExpectedURLs uint
	// SeenCacheKeys bounds the exact cache of URL keys known to be in the
	// store, which answers the repeated links of pages without a store
	// lookup (about 40 bytes a key at most); negative means none.
	SeenCacheKeys int
	// Partitions splits host-keyed state (partition = hash(host) mod P).
	Partitions int
	// MaxActiveHosts bounds the frontier's back queues (0: max(1024, 4*Workers)).
	MaxActiveHosts int
	// FrontBuffer and HeadSize bound the URLs the frontier holds in memory:
	// per front queue, and per active host. The rest stays on disk.
	FrontBuffer int
	HeadSize    int
	// HostCache bounds the hosts whose clock the frontier keeps in memory,
	// and every other per-host map (counters, robots.txt answers).
	HostCache int
	// Politeness moves each host's clock beyond Delay: the latency factor
	// (on strain too), backoff on 429/503, Retry-After, parking a failing
	// host and giving it up. A negative LatencyFactor turns the latency
	// rule off. GiveUpAfter left zero means never in a continuous crawl
	// (Recrawl), which would in time give up every host whose pages fail
	// now and then.
	Politeness frontier.Politeness
	// IPGroup is how hosts are grouped into servers that share a second
	// clock: IPGroupIP, IPGroupSubnet or IPGroupOff. IPGap is
	// that clock's least time between request starts; zero means Delay/4.
	IPGroup string
	IPGap   time.Duration

	Canon canon.Config
	// Scope's MaxDepth, MaxPathRepeats and DenyExtensions take their
	// defaults from Defaults, which are scope's own.
	Scope scope.Config
	// Fetch configures HTTP; its UserAgent is taken from UserAgent. A nil
	// Fetch.Cookies is given a jar of its own (fetch.NewJar): one per
	// crawl, so that a site that sets a session cookie is crawled as one
	// session. Its Headers are the crawl's (Headers, and the policies').
	Fetch fetch.Config
	// Headers are header fields sent with every request to the hosts
	// under the seeds' registrable domains (fetch.Site), each checked by
	// fetch.CheckHeader: a token, a language. Never to another host, and
	// never logged; the WARC request records hold them, as sent.
	Headers http.Header

	// Media decides, by media type, which response bodies are read and
	// archived, and up to how many bytes (it becomes Fetch.Bodies). Nil
	// means every type, PDFs up to media.DefaultCaps, the rest up to
	// Fetch.MaxBodyBytes.
	Media *media.Policy

	// Fresh starts over: an existing crawl state under DataDir is removed
	// (WARC files are kept). Without it, a DataDir that holds a crawl is
	// resumed.
	Fresh bool

	// StoreFS is the filesystem of the crawl state; nil means the real
	// disk. Tests wrap it to inject disk errors.
	StoreFS vfs.FS

	// Grace is how long fetches in flight may go on once Run's context is
	// done (Ctrl-C).
	Grace time.Duration

	// WARCMaxFileSize rotates WARC files.
	WARCMaxFileSize int64
	// CrawlLog, when set, is where the fetch log's records are written
	// as Heritrix's crawl.log too (fetchlog.Log.CrawlLog); "" for none.
	CrawlLog string
	// Cluster, when set, makes the crawl one node of several that split
	// the hosts by partition (see Cluster); nil is a crawl on its own.
	Cluster Cluster
	// SharedVisits says that other nodes of a cluster fetch this crawl's
	// URLs too, and hand their visits over (Crawler.Adopt): before each
	// page is fetched its record is read, and a visit made since the URL
	// was queued that is not due again counts as done here.
	SharedVisits bool
	// KeepAlive keeps Run going when nothing is queued or in flight, for
	// URLs still to come (Offer, AddSeeds); Run then ends with its context.
	KeepAlive bool
	// FailureWait bounds how long a crawl that ends (neither Recrawl nor
	// KeepAlive) waits on hosts held back by their failures (a
	// Retry-After, backoff after 429s, 503s and timeouts, a park, a
	// robots.txt retry) once nothing else is left: it ends FailureWait
	// after its last answered request, or as soon as no such host's
	// clock comes before that. Their URLs stay queued for the next run on
	// the same DataDir, and the summary names them (StoppedBy
	// "deferred"). An operator's held hosts are waited for whatever it
	// says. Negative waits for every clock, up to the longest Retry-After
	// (Politeness.MaxRetryAfter).
	FailureWait time.Duration

	// DedupFrom are the indexes of earlier crawls (CDXJ, WACZ, or a weft
	// data directory: archive.ImportDigests), imported at the start of
	// Run: a payload captured in one is archived as a revisit of it.
	DedupFrom []string

	// Objects, when set, takes each finished WARC file: it is uploaded,
	// its key recorded in the crawl's store, and the local file removed;
	// lookups then read records from the object store by byte range. A
	// file that cannot be uploaded stays on disk and is tried again at the
	// next start. Not used with a custom Archive.
	Objects archive.ObjectStore

	// Handlers read responses by media type (a response no handler
	// accepts is archived and not read); nil means content.Default(),
	// HTML and plain text. WithImages adds the image module: the images
	// HTML pages show are fetched, through the same scope (all but its
	// extension rule), robots.txt and politeness, and archived.
	Handlers   content.Set
	WithImages bool
	// Extensions read, after Handlers, the responses of the media types
	// they accept, adding links, fields and decisions (see
	// plugin.Handler and content.Set.Extend); their failures are counted per
	// extension and never stop the crawl. Filters judge every URL found
	// after the scope (see plugin.LinkFilter). Pages are given every fetched page
	// with its body once it is durable (see plugin.Consumer). None of them is
	// closed by the crawl.
	Extensions []plugin.Handler
	Filters    []plugin.LinkFilter
	Pages      []plugin.Consumer
	// NoRequisites turns off the fetching of what each HTML page needs to
	// render (its style sheets, scripts, images, fonts, media, favicon,
	// and the url()s of its style sheets; extract.Result.Embeds), which
	// by default is done as Heritrix and Browsertrix do, so that the
	// archive replays the page as it looked: through robots.txt,
	// politeness, the SSRF guard and the seen set like any URL, one hop
	// past the scope (scope.CheckRequisite), their links never followed.
	// Requisites include WithImages.
	NoRequisites bool
	// Render renders HTML pages in headless Chromium, every request of
	// theirs through this crawl's fetch path (see RenderConfig); by
	// default in auto mode, which without Chromium renders nothing.
	Render RenderConfig
	// NoSitemaps turns off sitemaps: by default each host's robots.txt
	// Sitemap: files and its /sitemap.xml are fetched when its robots.txt
	// is, through the same filters, robots.txt and politeness as links,
	// and the URLs they list (and the sitemaps an index lists) are
	// admitted as links are.
	NoSitemaps bool
	// Recrawl, when set, makes the crawl continuous (weft serve): it does
	// not end when its queues drain; each fetched page gets a next crawl
	// time from its learnt change rate (see package recrawl), is queued
	// again when that comes, and is asked for with the validators of its
	// last 200. RecrawlScan is how often due URLs are looked for.
	Recrawl     *recrawl.Policy
	RecrawlScan time.Duration
	// InLinkBytes is the memory that counts the in-links of every URL in
	// continuous mode (a count-min sketch, package sketch): each page's
	// distinct followed links, counted at its first fetch, weigh in their
	// targets' importance (recrawl.Importance). Zero means at least 4
	// bytes per ExpectedURLs (the sketch rounds up to a power of two):
	// measured (package sketch, TestCounts), two thirds of the URLs are
	// then counted exactly and the rest over by about one; at 8 bytes per
	// URL, nine in ten are exact. Negative turns counting off. The counts
	// are saved in the store every few minutes and when the crawl stops:
	// a crash loses the counts since the last save, not the crawl's. A
	// resumed crawl keeps the size of the counts it saved.
	InLinkBytes int
	// NearDupThreshold is the SimHash distance in bits within which a
	// parsed page is a near-duplicate of an earlier one: flagged in the
	// capture index, its links not followed (unless NearDupFollow, or it
	// links to things the earlier one does not: a listing's next page).
	// Negative turns judging off; pages of fewer than NearDupMinWords
	// visible words are not judged. NearDupMaxPages bounds the in-memory
	// index, 56 bytes a page; past it, pages are judged against its own.
	NearDupThreshold int
	NearDupMinWords  int
	NearDupMaxPages  int
	NearDupFollow    bool
	// NearDupTrapWindow is the number of a host's last judged pages that
	// the trap cut-off looks at: when more than half were near-duplicates,
	// the directory they are under, or the host, is cut off
	// (judge.JudgedPage). Negative turns the cut-off off; at most 64.
	NearDupTrapWindow int
	// Policies are the operator's per-host overrides (a longer delay, more
	// disallowed paths, a lower URL cap); nil means none. They are read on
	// every URL, so changes made while the crawl runs apply at once.
	Policies *policy.Set
	// Archive stores the responses; nil means WARC files under
	// DataDir/warc (see archive.Writer). The crawl closes it.
	Archive archive.Writer
	// Sinks receive every capture once it is durable (see Sink); the
	// crawl does not close them.
	Sinks []events.Sink
	// Logger receives one line per failed item; nil discards.
	Logger *slog.Logger

	// uploadWait and uploadLater pace the retries of a WARC file's upload
	// (objects.go); zero means 500 ms and a minute. Tests shorten them.
	uploadWait, uploadLater time.Duration
}

// DefaultDelay is Delay's default, the weft package's and --delay's.
const DefaultDelay = time.Second

// DefaultMaxCrawlDelay is MaxCrawlDelay's default in a crawl that ends, a
// minute: a host that asks for more lets the crawl fetch fewer than 1,440
// of its pages a day, and the crawl would wait on it for days. Nutch and
// StormCrawler skip such hosts past 30 seconds. A continuous crawl
// (Recrawl) refuses none for its Crawl-delay by default.
const DefaultMaxCrawlDelay = time.Minute

// DefaultFailureWait is FailureWait's default: two minutes after its last
// answer, a crawl left with nothing but failing hosts stops waiting for
// them. wget waits at most 10 s between retries (--waitretry); Nutch
// defers a host whose robots.txt fails 5 minutes, three times, then drops
// its queue; Heritrix retries a failed URL every 15 minutes, 30 times.
// Two minutes retry what a short outage or a burst of 429s asks for, and
// keep a person at the terminal from waiting on a server that asked for
// an hour: what it would fetch then is kept for the next run. They are
// longer than one timed-out request holds its host at the default flags
// (the delay, 15 s of silence, then five times that:
// frontier.DefaultLatencyFactor), so that one slow URL (a sitemap
// generated on demand, a search page) does not end its host's crawl; a
// second timeout in a row doubles the wait, and ends it.
const DefaultFailureWait = 2 * time.Minute

// DefaultMaxLinksPerPage is MaxLinksPerPage's default, 50,000: nearly
// twice the links of the largest documentation indexes, and the sitemap
// protocol's cap per file (see extract.DefaultMaxLinks for its cost).
const DefaultMaxLinksPerPage = extract.DefaultMaxLinks

// Defaults is the one table of a crawl's defaults: every setting of a
// Config that has one, at that value. New gives each field left zero its
// value here; weft.Config, which means the same by a zero field, and the
// weft command's flags, whose defaults are these, take theirs from it.
// A default that follows another setting is left zero here and worked
// out by WithDefaults: MaxActiveHosts (max(1024, 4 x Workers)), IPGap
// (Delay/4), InLinkBytes (4 bytes per ExpectedURLs), a continuous crawl's
// GiveUpAfter (never); by New: Media (every type, PDFs to
// media.DefaultCaps); by the frontier: Politeness.MinBackoff.
func Defaults() Config {
	return Config{
		Workers:           16,
		Delay:             DefaultDelay,
		MaxURLsPerHost:    100_000,
		MaxURLsPerPattern: judge.DefaultMaxURLsPerPattern,
		TrapBudget:        judge.DefaultTrapBudget,
		MaxRedirects:      5,
		MaxLinksPerPage:   DefaultMaxLinksPerPage,
		RobotsTTL:         24 * time.Hour,
		RobotsAttempts:    3,
		RobotsRetryWait:   time.Minute,
		MaxCrawlDelay:     DefaultMaxCrawlDelay,
		ExpectedURLs:      seen.DefaultExpectedURLs,
		SeenCacheKeys:     seen.DefaultCacheKeys,
		Partitions:        64,
		FrontBuffer:       frontier.DefaultFrontBuffer,
		HeadSize:          frontier.DefaultHeadSize,
		HostCache:         frontier.DefaultHostCache,
		Politeness:        frontier.DefaultPoliteness(),
		IPGroup:           IPGroupIP,
		Scope: scope.Config{Mode: scope.Domain, MaxDepth: scope.DefaultMaxDepth, MaxPathRepeats: scope.DefaultMaxPathRepeats,
			DenyExtensions: scope.DefaultDenyExtensions()},
		Fetch: fetch.Config{MaxBodyBytes: fetch.DefaultMaxBodyBytes, Timeout: fetch.DefaultTimeout, ConnectTimeout: fetch.DefaultConnectTimeout,
			ResponseHeaderTimeout: fetch.DefaultResponseHeaderTimeout, IdleTimeout: fetch.DefaultIdleTimeout,
			DNSMinTTL: fetch.DefaultDNSMinTTL, DNSMaxTTL: fetch.DefaultDNSMaxTTL},
		Grace:           10 * time.Second,
		WARCMaxFileSize: warc.DefaultMaxFileSize,
		FailureWait:     DefaultFailureWait,
		Render: RenderConfig{Mode: RenderAuto, Workers: render.DefaultWorkers, Timeout: render.DefaultTimeout, Idle: render.DefaultIdle,
			MaxScrolls: render.DefaultMaxScrolls, MaxClicks: render.DefaultMaxClicks, MaxNavigations: render.DefaultMaxNavigations,
			BehaviourTime: render.DefaultBehaviourTime, MemoryMB: 512, GiveUpAfter: 3},
		NearDupThreshold:  simhash.DefaultThreshold,
		NearDupMinWords:   50,
		NearDupMaxPages:   1_000_000,
		NearDupTrapWindow: 50,
		RecrawlScan:       10 * time.Second,
	}
}

// WithDefaults returns c with every field left zero set to its default:
// Defaults', through the fields of its fields, then those that follow
// other settings. A negative value and a No... field are left as they
// are: WithDefaults(WithDefaults(c)) is WithDefaults(c).
func (c Config) WithDefaults() Config {
	if c.Recrawl != nil && c.Politeness.GiveUpAfter == 0 {
		c.Politeness.GiveUpAfter = -1
	}
	if c.Recrawl != nil && c.MaxCrawlDelay == 0 {
		c.MaxCrawlDelay = -1 // a crawl that never ends refuses no host for its Crawl-delay
	}
	fillZero(reflect.ValueOf(&c).Elem(), reflect.ValueOf(Defaults()))
	if c.InLinkBytes == 0 {
		c.InLinkBytes = 4 * int(max(c.ExpectedURLs, seen.DefaultExpectedURLs))
	}
	if c.MaxActiveHosts == 0 {
		c.MaxActiveHosts = max(1024, 4*c.Workers)
	}
	if c.IPGap == 0 {
		c.IPGap = max(c.Delay, 0) / 4
	}
	return c
}

// fillZero sets each settable field of dst that is zero to src's, and
// goes through the fields of struct fields: a nested Config's own zero
// fields take their defaults one by one.
func fillZero(dst, src reflect.Value) {
	for i := range dst.NumField() {
		d, s := dst.Field(i), src.Field(i)
		switch {
		case !d.CanSet() || s.IsZero():
		case d.Kind() == reflect.Struct:
			fillZero(d, s)
		case d.IsZero():
			d.Set(s)
		}
	}
}

// setDefaults applies WithDefaults, and turns the negative "none" of
// Delay, MaxURLsPerHost and Render.MemoryMB into the zero their users read
// as none. It is New's, on its own copy: the result is no longer a Config
// as a caller writes one.
func (c *Config) setDefaults() {
	*c = c.WithDefaults()
	c.Delay = max(c.Delay, 0)
	c.MaxURLsPerHost = max(c.MaxURLsPerHost, 0)
	c.Render.MemoryMB = max(c.Render.MemoryMB, 0)
	if c.Media == nil {
		c.Media, _ = media.New(nil, nil, media.DefaultCaps()) // the defaults are valid
	}
	if c.Fetch.Bodies == nil {
		c.Fetch.Bodies = c.Media
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.uploadWait == 0 {
		c.uploadWait = 500 * time.Millisecond
	}
	if c.uploadLater == 0 {
		c.uploadLater = time.Minute
	}
	c.Fetch.UserAgent = c.UserAgent
}

// Validate reports the first invalid field, by its flag-like name.
func (c Config) Validate() error {
	for k, vs := range c.Headers {
		for _, v := range vs {
			if err := fetch.CheckHeader(k, v); err != nil {
				return fmt.Errorf("crawl: %w", err)
			}
		}
	}
	switch {
	case c.DataDir == "":
		return fmt.Errorf("crawl: data directory is required")
	case c.UserAgent == "":
		return fmt.Errorf("crawl: user agent is required")
	case c.Workers < 0:
		return fmt.Errorf("crawl: workers %d is negative", c.Workers)
	case c.MaxPages < 0:
		return fmt.Errorf("crawl: max pages %d is negative", c.MaxPages)
	case c.MaxRequisites < 0:
		return fmt.Errorf("crawl: max requisites %d is negative", c.MaxRequisites)
	case c.MaxLinksPerPage < 0:
		return fmt.Errorf("crawl: max links per page %d is negative", c.MaxLinksPerPage)
	case c.MaxURLsPerPattern > judge.MaxPatternCap:
		return fmt.Errorf("crawl: max URLs per pattern %d is over %d", c.MaxURLsPerPattern, judge.MaxPatternCap)
	case c.Grace < 0:
		return fmt.Errorf("crawl: grace %v is negative", c.Grace)
	case c.RobotsTTL < 0:
		return fmt.Errorf("crawl: robots TTL %v is negative", c.RobotsTTL)
	case c.NearDupThreshold > simhash.Guaranteed:
		return fmt.Errorf("crawl: near-duplicate threshold %d bits is beyond what the index finds for sure (%d)", c.NearDupThreshold, simhash.Guaranteed)
	case c.NearDupMinWords < 0:
		return fmt.Errorf("crawl: near-duplicate minimum of %d words is negative", c.NearDupMinWords)
	case c.RecrawlScan < 0:
		return fmt.Errorf("crawl: recrawl scan interval %v is negative", c.RecrawlScan)
	case c.NearDupTrapWindow > 64:
		return fmt.Errorf("crawl: near-duplicate trap window of %d pages is over 64", c.NearDupTrapWindow)
	case c.NearDupMaxPages < 0:
		return fmt.Errorf("crawl: near-duplicate index of %d pages is negative", c.NearDupMaxPages)
	case c.RobotsAttempts < 0:
		return fmt.Errorf("crawl: robots attempts %d is negative", c.RobotsAttempts)
	case c.RobotsRetryWait < 0:
		return fmt.Errorf("crawl: robots retry wait %v is negative", c.RobotsRetryWait)
	case c.RobotsLastGood < 0:
		return fmt.Errorf("crawl: robots last-good window %v is negative", c.RobotsLastGood)
	case c.Partitions < 0:
		return fmt.Errorf("crawl: partitions %d is negative", c.Partitions)
	case c.IPGroup != "" && c.IPGroup != IPGroupOff && c.IPGroup != IPGroupIP && c.IPGroup != IPGroupSubnet:
		return fmt.Errorf("crawl: IP grouping %q: want off, ip or subnet", c.IPGroup)
	case c.IPGap < 0:
		return fmt.Errorf("crawl: IP gap %v is negative", c.IPGap)
	}
	if err := c.Politeness.Validate(); err != nil {
		return err
	}
	if err := c.Render.Validate(); err != nil {
		return err
	}
	if c.Fetch.MaxBodyBytes != 0 && c.Fetch.MaxBodyBytes < robots.MaxBytes {
		return fmt.Errorf("crawl: max body %d bytes is below %d, the least a robots.txt may need (RFC 9309 §2.5)", c.Fetch.MaxBodyBytes, robots.MaxBytes)
	}
	if err := c.Scope.Validate(); err != nil {
		return err
	}
	f := c.Fetch
	f.UserAgent = c.UserAgent
	return f.Validate()
}

// robotsRetry is the robots package's view of the robots.txt settings.
func (c *Config) robotsRetry() robots.Retry {
	return robots.Retry{TTL: c.RobotsTTL, Attempts: c.RobotsAttempts, Wait: c.RobotsRetryWait, LastGood: c.RobotsLastGood}
}

// policyLimits are the crawl's settings a policy may only tighten.
func (c *Config) policyLimits() policy.Limits {
	return policy.Limits{Delay: c.Delay, MaxURLs: c.MaxURLsPerHost}
}

func (c Config) warcDir() string { return filepath.Join(c.DataDir, "warc") }

// hostCache is HostCache or its default: the bound of every per-host map
// (clocks, counters, robots.txt answers).
func (c *Config) hostCache() int {
	if c.HostCache > 0 {
		return c.HostCache
	}
	return frontier.DefaultHostCache
}

// robotsCache is the bound of the parsed robots.txt answers kept in
// memory: a quarter of the host cache, since a parsed file of 80 rules
// takes about 11 KB, fifty times a host's clock and counters. At the
// default that is 32,768 files, about 360 MiB at worst; an evicted answer
// is parsed again from the store's copy when its host is next leased.
func (c *Config) robotsCache() int { return max(c.hostCache()/4, 1) }
