// Package settings holds a crawl's settings as a person states them: the
// Config the root package weft names for programs (weft.Config is an
// alias of it), which the weft command fills from its flags. Crawl turns
// a Config into the crawl's own, so that a program and the command
// configure a crawl one way, and the command can do nothing a program
// cannot.
package settings

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/judge"
	"github.com/weft-crawler/weft/internal/media"
	"github.com/weft-crawler/weft/internal/objstore"
	"github.com/weft-crawler/weft/internal/plugin"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
)

// SeedOptions are one seed's own limits: its scope mode, its most link
// hops, its page budget and its include and exclude expressions, each
// zero for the crawl's (see package internal/seeds).
type SeedOptions = seeds.Options

// Config describes a crawl. Seeds, DataDir and UserAgent are required.
// Every other field left zero means its default, the weft command's flag
// default (weft crawl -h lists them, and so does docs/flags.md); a
// setting on by default is turned off by a negative number (no limit,
// none, never) or a No... field. Where a flag takes 0 for "none", the
// field takes a negative number: its zero is the default.
type Config struct {
	// Seeds are the absolute http or https URLs the crawl starts from.
	Seeds []string
	// Sitemaps are seeds that are sitemaps or sitemap indexes: every URL
	// they list (through an index, its sitemaps') is a seed, with
	// robots.txt and politeness as usual. A seed of Seeds that answers
	// with a sitemap is read the same way. Seeds or Sitemaps is required.
	Sitemaps []string
	// SeedOptions are the limits of the seeds that have their own (scope,
	// depth, page budget, include and exclude: SeedOptions), keyed by the
	// seed as Seeds or Sitemaps give it. A seed absent has the crawl's.
	SeedOptions map[string]SeedOptions
	// SitemapOnly crawls the seeds and the URLs their sitemaps list, with
	// their redirects and requisites, and follows no other link: no
	// page's links, no sitemap a robots.txt names.
	SitemapOnly bool
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
	// robots.txt Crawl-delay wins. Zero means 1s (weft.DefaultDelay);
	// negative means no gap, for a crawl of servers of your own.
	Delay time.Duration
	// Workers is the number of fetches at once (never two to one host);
	// zero means 16.
	Workers int
	// MaxPages stops the crawl after this many page fetches; zero means no
	// limit. Requisites, sitemaps and robots.txt are not pages.
	MaxPages int64
	// MaxRequisites bounds the fetches of requisites and sitemaps, which
	// past it are dropped unrequested while the pages go on; zero means no
	// limit (requisites come only from the pages MaxPages lets through).
	MaxRequisites int64
	// MaxDepth is the most link hops from a seed; zero means 20
	// (weft.DefaultMaxDepth), negative no limit.
	MaxDepth int
	// MaxURLsPerHost bounds the URLs accepted per host, a guard against
	// crawl traps; zero means 100,000, negative no limit.
	MaxURLsPerHost int64
	// MaxURLsPerPattern bounds the URLs accepted per host for one URL
	// pattern (the path with its digits as #, its generated tokens as *,
	// without the query): calendars, faceted search, session ids in
	// paths. Seeds are exempt. Zero means 10,000, negative no limit; at
	// most 65,000.
	MaxURLsPerPattern int
	// TrapBudget is the URLs a family of URLs (one path's query variants,
	// one dated path shape like /cal/2026/11/) may queue from its own
	// pages before they have shown their worth: it grows by a URL for
	// each page that leads somewhere new and shrinks for copies; past it
	// they are queued last and counted. Zero means 50, negative no
	// budget.
	TrapBudget int
	// MaxPathRepeats is the most times one segment may occur in a URL's
	// path (/a/b/a/b/...); zero means 3, negative no limit.
	MaxPathRepeats int
	// MaxRedirects bounds a redirect chain, each hop queued for its host
	// like a link; zero means 5, negative follows none. robots.txt's own
	// redirects are followed up to five hops whatever it says.
	MaxRedirects int
	// MaxLinksPerPage is the most links read of one HTML page; a page cut
	// there is logged with its URL and counted per host. Zero means 50,000.
	MaxLinksPerPage int
	// Grace is how long fetches in flight may go on once Run's context is
	// done; zero means 10s.
	Grace time.Duration
	// FailureWait is how long after its last answered request a crawl
	// stops waiting for hosts whose requests fail (a Retry-After, backoff,
	// a park, a robots.txt retry), leaving their URLs queued for the next
	// Run on DataDir. Zero means a minute; negative waits for every clock,
	// up to MaxRetryAfter.
	FailureWait time.Duration

	// Scope says which URLs the crawl goes to; nil means ScopeMode's.
	Scope plugin.Scope
	// ScopeMode is how the seeds widen the scope when Scope is nil:
	// "domain" (the seeds' registrable domains: www.example.co.uk admits
	// every host under example.co.uk; "" means it), "host", "prefix" (the
	// seeds' URLs as path prefixes) or "any".
	ScopeMode string
	// Include and Exclude are regular expressions: a URL is followed only
	// if it matches one of Include (when there are any) and none of
	// Exclude.
	Include, Exclude []string
	// RejectExtensions are the file name extensions of links not followed;
	// nil means images, fonts, audio, video, archives and executables
	// (scope.DefaultDenyExtensions), an empty slice none. A link an
	// Include expression matches is followed whatever its extension.
	RejectExtensions []string
	// StripParams are query parameters (case-insensitive) removed when a
	// URL is canonicalised, beside the tracking and session-id ones always
	// removed.
	StripParams []string
	// Filters judge every URL found within the scope, in order; the first
	// refusal counts.
	Filters []plugin.LinkFilter
	// Handlers read responses by media type, after weft's own reading.
	Handlers []plugin.Handler
	// Consumers are given every fetched page once it is archived.
	Consumers []plugin.Consumer

	// AcceptMIME and RejectMIME are the media types whose bodies are read
	// and archived ("type/subtype", "type/*" or "*/*"; nil AcceptMIME
	// means every type, and the more specific rule wins); the others are
	// archived as their headers alone.
	AcceptMIME, RejectMIME []string
	// MaxBodyBytes is the most body bytes read per response, before and
	// after decompression; zero means 10 MiB.
	MaxBodyBytes int64
	// MaxBodyFor caps the body bytes read of a media type instead
	// ("application/pdf", "video/*": 0 refuses them), the most specific
	// pattern winning; nil means PDFs up to 32 MiB.
	MaxBodyFor map[string]int64
	// NoRequisites turns off the fetching of what each HTML page needs to
	// render: its style sheets and their url()s, scripts, images, fonts,
	// media and favicon, fetched through robots.txt, politeness and the
	// address guard, one hop past the scope, their links not followed,
	// so that the archive replays the page as it looked.
	NoRequisites bool
	// Requisites asks for the requisites, which are fetched anyway unless
	// NoRequisites is set.
	//
	// Deprecated: requisites are fetched by default; set NoRequisites to
	// fetch pages alone.
	Requisites bool
	// WithImages fetches the images pages show (<img src>) when
	// NoRequisites is set; they are requisites too.
	WithImages bool
	// NoSitemaps turns off sitemaps: each host's robots.txt Sitemap: files
	// and /sitemap.xml, whose URLs are admitted like links.
	NoSitemaps bool

	// RenderMode says which HTML pages are rendered in headless Chromium,
	// every request of theirs through the crawl's own fetch path: "auto"
	// ("" means it: pages that need their scripts, on hosts where
	// rendering finds links the HTML did not have), "always" or "never".
	// Without Chromium the crawl runs as "never".
	RenderMode string
	// RenderChromium is the browser; "" looks for chromium on the PATH.
	RenderChromium string
	// RenderWorkers is the most browsers at once; zero means 1.
	RenderWorkers int
	// RenderTimeout is each rendered page's time budget; zero means 30s.
	// RenderIdle is how long none of its requests must be in flight for
	// it to count as settled; zero means 500ms.
	RenderTimeout, RenderIdle time.Duration
	// RenderScrolls, RenderClicks and RenderNavigations bound what is
	// done to a rendered page: scrolls to its bottom that grew it, clicks
	// of its controls that are not links, and navigations its scripts
	// ask for (pushState, location, window.open) captured as its links
	// and cancelled. Zero means each one's default (10, 20, 100),
	// negative turns it off. RenderBehaviourTime bounds each of them on
	// a page; zero means 10s.
	RenderScrolls, RenderClicks, RenderNavigations int
	RenderBehaviourTime                            time.Duration
	// RenderScreenshot archives a PNG of each rendered page.
	RenderScreenshot bool
	// RenderMemory caps each browser's JavaScript heap, in bytes (whole
	// MiB); zero means 512 MiB, negative V8's own.
	RenderMemory int64
	// RenderGiveUpAfter stops rendering a host, in auto mode, after this
	// many renders in a row found no link its HTML did not have; zero
	// means 3.
	RenderGiveUpAfter int

	// NearDupThreshold is the SimHash distance in bits (1 to 11) within
	// which a page is a near-duplicate of an earlier one: flagged in the
	// capture index, its links not followed (unless NearDupFollow, or it
	// links to things the earlier one does not). Zero means 9; negative
	// does not judge.
	NearDupThreshold int
	// NearDupMinWords: pages of fewer visible words are not judged; zero
	// means 50. NearDupMaxPages bounds the pages the index holds, 56 bytes
	// each; zero means 1,000,000.
	NearDupMinWords, NearDupMaxPages int
	// NearDupFollow follows the links of near-duplicate pages too.
	NearDupFollow bool
	// NearDupTrapWindow cuts off the directory a host's near-duplicates
	// are under, as deep as they are, or the host (no new URL in it
	// admitted), when more than half of its last this many judged pages
	// were near-duplicates; zero means 50, negative never; at most 64.
	NearDupTrapWindow int

	// AllowNetworks are address ranges the crawl may connect to although
	// they are refused by default (loopback, private, link-local: a test
	// server on 127.0.0.1, an intranet). DenyNetworks are refused even
	// inside those.
	AllowNetworks, DenyNetworks []netip.Prefix
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
	// HTTP2 offers HTTP/2 to TLS servers; its exchanges are archived in
	// HTTP/1.1 form, not as the bytes sent.
	HTTP2 bool
	// CookiesFile is a Netscape cookies.txt file (as curl, wget and
	// browser extensions write it) whose cookies start the crawl's cookie
	// jar: to crawl as a signed-in user. The jar, one per crawl, also
	// keeps the cookies sites set; each cookie goes only to the hosts its
	// domain covers (RFC 6265, with the public suffix list). The WARC
	// request records hold the Cookie fields sent.
	CookiesFile string
	// Headers are header fields sent with every request to the hosts
	// under the seeds' registrable domains (a policy's "headers" go to
	// its host alone), never to another host, and never logged. Cookie,
	// Host, User-Agent and the fields of the connection cannot be set.
	Headers http.Header
	// Timeout bounds a whole request, ConnectTimeout its connection,
	// HeaderTimeout the wait for the response's headers and IdleTimeout a
	// silence while reading it; zero means 60s, 10s, 15s and 15s.
	Timeout, ConnectTimeout, HeaderTimeout, IdleTimeout time.Duration
	// DNSMinTTL and DNSMaxTTL bound how long a DNS answer is kept,
	// whatever its TTL; zero means 1m and 1h, a negative DNSMinTTL no
	// floor.
	DNSMinTTL, DNSMaxTTL time.Duration

	// RobotsTTL is how long a robots.txt answer is used before it is
	// fetched again; zero means 24h.
	RobotsTTL time.Duration
	// RobotsAttempts failed robots.txt fetches in a row (5xx, 429, network
	// error) make a host count as completely disallowed; until then its
	// URLs wait, and the file is fetched again after RobotsRetryWait,
	// doubled after each failure. Zero means 3 and a minute.
	RobotsAttempts  int
	RobotsRetryWait time.Duration
	// RobotsLastGood is Google's rule for an unreachable robots.txt: the
	// last good copy is used up to this age, and the host crawled as if
	// it had none once it has failed this long. Zero keeps RFC 9309's
	// complete disallow.
	RobotsLastGood time.Duration
	// MaxCrawlDelay is the longest Crawl-delay waited between two requests
	// to a host: a host whose robots.txt asks for more is not crawled, its
	// URLs dropped ("crawl-delay"), rather than requested sooner than it
	// asked. Zero means a minute in a crawl that ends and none in a
	// continuous one; negative honours any Crawl-delay (up to 30 days).
	MaxCrawlDelay time.Duration
	// PolicyFile is a JSON file of per-host policies that make the crawl
	// more polite, or boost which of a host's URLs go first: {"host":
	// {"crawl_delay": "5s", "disallowed": ["/path"], "max_urls": 1000,
	// "boost": 4, "boosts": [{"pattern": "/news/*", "factor": 8}]}}.
	PolicyFile string

	// LatencyFactor makes a host's gap at least this multiple of its last
	// response's time, and a timed-out or cut request's wait at least this
	// multiple of its time; zero means 5, negative turns it off.
	LatencyFactor float64
	// MaxBackoff is the ceiling of the backoff that doubles on each 429 or
	// 503 without Retry-After (zero means 10m); MaxRetryAfter the longest
	// Retry-After honoured (zero means 1h).
	MaxBackoff, MaxRetryAfter time.Duration
	// ParkAfter failures in a row (timeouts, connection errors, 5xx) park
	// a host for ParkFor, doubled each time; zero means 5 and a minute,
	// a negative ParkAfter never.
	ParkAfter int
	ParkFor   time.Duration
	// GiveUpAfter failures more than the host's answers, or 429 answers in
	// a row over at least MaxBackoff, give a host up and drop its queued
	// URLs; zero means 20, negative never.
	GiveUpAfter int
	// IPGroup is how hosts are grouped into servers that share a second
	// clock: "ip" (the same address; "" means it), "subnet" (the same /24
	// or /64) or "off". IPGap is that clock's least time between request
	// starts; zero means a quarter of Delay.
	IPGroup string
	IPGap   time.Duration

	// ExpectedURLs sizes the seen set's Bloom filters (1% false
	// positives, each one confirmed exactly); zero means 1,000,000.
	ExpectedURLs uint
	// SeenCacheKeys bounds the URL keys known to be in the store that are
	// kept in memory, so that repeated links need no store lookup (about
	// 40 bytes each at most); zero means 1,048,576, negative none.
	SeenCacheKeys int
	// ActiveHosts bounds the hosts crawled at once, each with a back queue
	// in memory; zero means max(1024, 4 x Workers).
	ActiveHosts int
	// FrontBuffer is the URLs of each of the 3 priority queues kept in
	// memory, HeadSize those of each active host; the rest is on disk.
	// Zero means 4096 and 64.
	FrontBuffer, HeadSize int
	// HostCache bounds the hosts whose state (clock, URL and error counts)
	// is kept in memory, and a quarter as many parsed robots.txt files;
	// the least recently used are evicted to disk. Zero means 131,072.
	HostCache int
	// WARCMaxSize rotates WARC files at this size; zero means 1 GiB.
	WARCMaxSize int64
	// DedupFrom are the indexes of earlier crawls: CDXJ files (weft's, or
	// pywb-style; gzipped or not), WACZ files, or data directories of
	// weft crawls. A payload captured in one of them is written as a
	// revisit record that refers to that capture, as a payload this crawl
	// archived already is. Each is imported into the crawl's store at
	// the start of Run (again only if it changed).
	DedupFrom []string
	// CrawlLog, when set, is a file that every fetch is written to as a
	// line of Heritrix's crawl.log (appended), for the tools that read
	// one; "" means none (DataDir's fetches.jsonl is written either way).
	CrawlLog string

	// S3Endpoint and S3Bucket, when set, send each finished WARC file to
	// an S3-compatible object store ("http://host:port" or
	// "https://host"), under S3Prefix, and remove it from DataDir once it
	// is there. S3Region is sent to stores that need one; S3AccessKey and
	// S3SecretKey sign the requests (both empty: anonymous).
	S3Endpoint, S3Bucket, S3Prefix, S3Region string
	S3AccessKey, S3SecretKey                 string

	// Logger receives a line per failed item (a page that would not
	// parse, a handler that failed); nil discards them.
	Logger *slog.Logger
}

// A FieldError is a setting of a Config that is wrong: Fields name it
// (more than one when they are wrong together), Err says why.
type FieldError struct {
	Fields []string
	Err    error
}

func (e *FieldError) Error() string { return strings.Join(e.Fields, ", ") + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

var errBoth = errors.New("both set: give one")

func fieldError(err error, fields ...string) error { return &FieldError{Fields: fields, Err: err} }

// Crawl checks cfg and turns it into the crawl's Config. Each field is
// passed on as it is, a zero for the crawl to give it its default
// (crawl.Defaults) and a negative number for none, but where the crawl
// spells none another way (DNSMinTTL). Its errors name the field; they are
// the weft package's, which prefixes them.
func Crawl(cfg Config) (crawl.Config, error) {
	if cfg.NoRequisites && cfg.Requisites {
		return crawl.Config{}, fieldError(errBoth, "Requisites", "NoRequisites")
	}
	for u, o := range cfg.SeedOptions {
		if err := o.Validate(); err != nil {
			return crawl.Config{}, fieldError(fmt.Errorf("%s: %w", u, err), "SeedOptions")
		}
	}
	cc := crawl.Config{
		Seeds: cfg.Seeds, Sitemaps: cfg.Sitemaps, SeedOptions: cfg.SeedOptions, SitemapOnly: cfg.SitemapOnly, DataDir: cfg.DataDir, UserAgent: cfg.UserAgent, Fresh: cfg.Fresh,
		Delay: cfg.Delay, Workers: cfg.Workers, MaxPages: cfg.MaxPages, MaxRequisites: cfg.MaxRequisites, MaxURLsPerHost: cfg.MaxURLsPerHost,
		MaxURLsPerPattern: cfg.MaxURLsPerPattern, TrapBudget: cfg.TrapBudget, MaxRedirects: cfg.MaxRedirects, MaxLinksPerPage: cfg.MaxLinksPerPage,
		Grace: cfg.Grace, FailureWait: cfg.FailureWait,
		NoRequisites: cfg.NoRequisites, WithImages: cfg.WithImages, NoSitemaps: cfg.NoSitemaps,
		Render: crawl.RenderConfig{
			Mode: cfg.RenderMode, Chromium: cfg.RenderChromium, Workers: cfg.RenderWorkers, Timeout: cfg.RenderTimeout,
			Idle: cfg.RenderIdle, MaxScrolls: cfg.RenderScrolls, MaxClicks: cfg.RenderClicks, Screenshot: cfg.RenderScreenshot,
			MaxNavigations: cfg.RenderNavigations, BehaviourTime: cfg.RenderBehaviourTime,
			MemoryMB: int(cfg.RenderMemory >> 20), GiveUpAfter: cfg.RenderGiveUpAfter,
		},
		NearDupThreshold: cfg.NearDupThreshold, NearDupMinWords: cfg.NearDupMinWords, NearDupMaxPages: cfg.NearDupMaxPages,
		NearDupFollow: cfg.NearDupFollow, NearDupTrapWindow: cfg.NearDupTrapWindow,
		RobotsTTL: cfg.RobotsTTL, RobotsAttempts: cfg.RobotsAttempts, RobotsRetryWait: cfg.RobotsRetryWait,
		RobotsLastGood: cfg.RobotsLastGood, MaxCrawlDelay: cfg.MaxCrawlDelay,
		Politeness: frontierPoliteness(cfg),
		IPGroup:    cfg.IPGroup, IPGap: cfg.IPGap,
		ExpectedURLs: cfg.ExpectedURLs, SeenCacheKeys: cfg.SeenCacheKeys, MaxActiveHosts: cfg.ActiveHosts,
		FrontBuffer: cfg.FrontBuffer, HeadSize: cfg.HeadSize, HostCache: cfg.HostCache,
		WARCMaxFileSize: cfg.WARCMaxSize, DedupFrom: cfg.DedupFrom, CrawlLog: cfg.CrawlLog,
		Logger: cfg.Logger,
	}
	if cfg.RenderMemory < 0 {
		cc.Render.MemoryMB = -1 // V8's own
	} else if cfg.RenderMemory > 0 && cfg.RenderMemory < 1<<20 {
		return crawl.Config{}, fieldError(fmt.Errorf("%d bytes is under 1 MiB, the least V8 takes", cfg.RenderMemory), "RenderMemory")
	}
	if err := setScope(&cc, cfg); err != nil {
		return crawl.Config{}, err
	}
	if err := setFetch(&cc, cfg); err != nil {
		return crawl.Config{}, err
	}
	if err := setPlugins(&cc, cfg); err != nil {
		return crawl.Config{}, err
	}
	if cfg.S3Endpoint != "" || cfg.S3Bucket != "" {
		s, err := objstore.New(objstore.Config{Endpoint: cfg.S3Endpoint, Bucket: cfg.S3Bucket, Prefix: cfg.S3Prefix,
			Region: cfg.S3Region, AccessKey: cfg.S3AccessKey, SecretKey: cfg.S3SecretKey})
		if err != nil {
			return crawl.Config{}, fieldError(err, "S3Endpoint", "S3Bucket")
		}
		cc.Objects = s
	}
	if err := cc.Validate(); err != nil {
		return crawl.Config{}, err
	}
	for _, src := range cfg.DedupFrom {
		// Found now, read at the start of the crawl (archive.ImportDigests).
		if _, err := os.Stat(src); err != nil {
			return crawl.Config{}, fieldError(fmt.Errorf("dedup source: %w", err), "DedupFrom")
		}
	}
	if cfg.PolicyFile != "" {
		// A policy may only make the crawl more polite than its own
		// settings, with their defaults.
		d := cc.WithDefaults()
		set, err := policy.Load(cfg.PolicyFile, policy.Limits{Delay: max(d.Delay, 0), MaxURLs: max(d.MaxURLsPerHost, 0)})
		if err != nil {
			return crawl.Config{}, fieldError(err, "PolicyFile")
		}
		cc.Policies = set
	}
	return cc, nil
}

// frontierPoliteness is what moves a host's clock beyond Delay.
func frontierPoliteness(cfg Config) (p frontier.Politeness) {
	p.LatencyFactor, p.MaxBackoff, p.MaxRetryAfter = cfg.LatencyFactor, cfg.MaxBackoff, cfg.MaxRetryAfter
	p.ParkAfter, p.ParkFor, p.GiveUpAfter = cfg.ParkAfter, cfg.ParkFor, cfg.GiveUpAfter
	return p
}

// setScope sets where the crawl goes: the scope, its filters and how URLs
// are canonicalised.
func setScope(cc *crawl.Config, cfg Config) error {
	cc.Scope = scope.Config{Include: cfg.Include, Exclude: cfg.Exclude, MaxDepth: cfg.MaxDepth,
		MaxPathRepeats: cfg.MaxPathRepeats, DenyExtensions: cfg.RejectExtensions}
	if cfg.ScopeMode != "" {
		if cfg.Scope != nil {
			return fieldError(errBoth, "Scope", "ScopeMode")
		}
		mode, err := scope.ParseMode(cfg.ScopeMode)
		if err != nil {
			return fieldError(err, "ScopeMode")
		}
		cc.Scope.Mode = mode
	}
	if cfg.Scope != nil {
		// The scope decides which hosts and paths; weft's own rules
		// (scheme, length, extension, depth, repeated segments) still
		// apply.
		cc.Scope.Mode = scope.Any
		cc.Filters = append(cc.Filters, scopeFilter(cfg.Scope))
	}
	if len(cfg.StripParams) > 0 {
		cc.Canon.StripParams = append(canon.DefaultStripParams(), cfg.StripParams...)
	}
	return nil
}

// setFetch sets what is fetched and read, and how.
func setFetch(cc *crawl.Config, cfg Config) error {
	f := &cc.Fetch
	f.AllowCIDRs, f.DenyCIDRs, f.Resolve = cfg.AllowNetworks, cfg.DenyNetworks, cfg.Resolve
	f.MaxBodyBytes, f.HTTP2 = cfg.MaxBodyBytes, cfg.HTTP2
	f.Timeout, f.ConnectTimeout, f.ResponseHeaderTimeout, f.IdleTimeout = cfg.Timeout, cfg.ConnectTimeout, cfg.HeaderTimeout, cfg.IdleTimeout
	f.DNSMinTTL, f.DNSMaxTTL = cfg.DNSMinTTL, cfg.DNSMaxTTL
	if cfg.DNSMinTTL < 0 {
		f.DNSMinTTL = time.Nanosecond // the fetcher's zero is its default; a nanosecond is no floor
	}
	if len(cfg.CAFiles) > 0 {
		pool, err := fetch.LoadCAFiles(cfg.CAFiles...)
		if err != nil {
			return fieldError(err, "CAFiles")
		}
		f.TLSConfig = &tls.Config{RootCAs: pool}
	}
	for i, h := range cfg.InsecureTLS {
		if _, err := fetch.InsecureTLSKey(h); err != nil {
			return fmt.Errorf("InsecureTLS[%d] %q: %w", i, h, err)
		}
	}
	f.InsecureTLS = cfg.InsecureTLS
	for k, vs := range cfg.Headers {
		for _, v := range vs {
			if err := fetch.CheckHeader(k, v); err != nil {
				return fieldError(err, "Headers")
			}
		}
	}
	cc.Headers = cfg.Headers.Clone()
	if cfg.CookiesFile != "" {
		jar := fetch.NewJar()
		if _, err := jar.LoadFile(cfg.CookiesFile); err != nil {
			return fieldError(err, "CookiesFile")
		}
		f.Cookies = jar
	}
	if cfg.AcceptMIME != nil || cfg.RejectMIME != nil || cfg.MaxBodyFor != nil {
		caps := media.DefaultCaps()
		if cfg.MaxBodyFor != nil {
			caps = nil
			// In the order of their patterns: of two that match a type
			// alike, the first wins.
			for _, pat := range slices.Sorted(maps.Keys(cfg.MaxBodyFor)) {
				caps = append(caps, media.Cap{Pattern: pat, Bytes: cfg.MaxBodyFor[pat]})
			}
		}
		m, err := media.New(cfg.AcceptMIME, cfg.RejectMIME, caps)
		if err != nil {
			return fieldError(err, "AcceptMIME", "RejectMIME", "MaxBodyFor")
		}
		cc.Media = m
	}
	return nil
}

// setPlugins adds the program's filters, handlers and consumers, each
// checked.
func setPlugins(cc *crawl.Config, cfg Config) error {
	for i, f := range cfg.Filters {
		if f == nil {
			return fmt.Errorf("Filters[%d] is nil", i)
		}
		cc.Filters = append(cc.Filters, f)
	}
	names := map[string]int{}
	for i, h := range cfg.Handlers {
		if h == nil {
			return fmt.Errorf("Handlers[%d] is nil", i)
		}
		name := plugin.NameOf(h, i)
		if j, dup := names[name]; dup {
			return fmt.Errorf("Handlers[%d] and Handlers[%d] are both named %q", j, i, name)
		}
		names[name] = i
		cc.Extensions = append(cc.Extensions, h)
	}
	for i, c := range cfg.Consumers {
		if c == nil {
			return fmt.Errorf("Consumers[%d] is nil", i)
		}
		cc.Pages = append(cc.Pages, c)
	}
	return nil
}

// scopeFilter is s as the crawl judges it: a filter whose refusals count
// as "scope", as weft's own scope's do.
func scopeFilter(s plugin.Scope) plugin.LinkFilter {
	contains := func(raw string) bool {
		u, err := url.Parse(raw)
		return err == nil && s.Contains(u)
	}
	return plugin.LinkFilterFunc(func(l plugin.Link) string {
		if contains(l.URL) {
			return ""
		}
		if l.Kind == plugin.LinkRequisite && contains(l.From) {
			return "" // a page's requisite, one hop past the scope, as weft's own scope allows
		}
		return judge.Scope
	})
}
