package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft"
	"github.com/weft-crawler/weft/internal/api"
	"github.com/weft-crawler/weft/internal/bytesize"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/cluster"
	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/fetch"
	"github.com/weft-crawler/weft/internal/jetstream"
	"github.com/weft-crawler/weft/internal/media"
	"github.com/weft-crawler/weft/internal/objstore"
	"github.com/weft-crawler/weft/internal/operator"
	"github.com/weft-crawler/weft/internal/policy"
	"github.com/weft-crawler/weft/internal/profile"
	"github.com/weft-crawler/weft/internal/robots"
	"github.com/weft-crawler/weft/internal/scope"
	"github.com/weft-crawler/weft/internal/seeds"
	"github.com/weft-crawler/weft/internal/settings"
	"github.com/weft-crawler/weft/internal/simhash"
	"github.com/weft-crawler/weft/internal/version"
)

// defaultUserAgent names weft and where a site operator can read about it.
// Operators of a real crawl set their own contact with --user-agent.
func defaultUserAgent() string {
	return version.Software() + " (+https://example.org/weft-crawler)"
}

// crawlFlags are the flags shared by crawl, demo and bench.
type crawlFlags struct {
	seedsFile      string
	dataDir        string
	maxPages       int64
	maxRequisites  int64
	maxDepth       int
	maxURLsPerHost int64
	maxPerPattern  int
	trapBudget     int
	maxRepeats     int
	maxRedirects   int
	maxLinks       int
	delay          time.Duration
	workers        int
	userAgent      string
	expectedURLs   uint
	seenCache      int
	scopeMode      string
	include        []string
	exclude        []string
	resolve        []string
	allowCIDR      []string
	caFiles        []string
	insecureTLS    []string
	cookiesFile    string
	headers        []string
	summaryFile    string
	natsURL        string
	clusterURL     string
	nodeName       string
	leaseTTL       time.Duration
	replicas       int
	advertise      string
	snapEvery      time.Duration
	snapAfter      int
	pagesStream    string
	pagesSubject   string
	s3             s3Flags
	denyCIDR       []string
	stripParams    []string
	maxBody        int64
	timeout        time.Duration
	connectTimeout time.Duration
	headerTimeout  time.Duration
	http2          bool
	acceptMIME     []string
	rejectMIME     []string
	bodyCaps       []string
	rejectExt      []string
	idleTimeout    time.Duration
	dnsMinTTL      time.Duration
	dnsMaxTTL      time.Duration
	grace          time.Duration
	fresh          bool
	warcMaxSize    int64
	dedupFrom      []string
	crawlLog       string
	logLevel       string
	progress       string
	httpAddr       string
	httpToken      string
	httpTokenFile  string
	activeHosts    int
	frontBuffer    int
	headSize       int
	hostCache      int
	memoryLimit    int64
	latencyFactor  float64
	maxBackoff     time.Duration
	maxRetryAfter  time.Duration
	parkAfter      int
	parkFor        time.Duration
	giveUpAfter    int
	ipGroup        string
	ipGap          time.Duration
	robotsTTL      time.Duration
	robotsAttempts int
	robotsWait     time.Duration
	failureWait    time.Duration
	robotsLastGood time.Duration
	maxCrawlDelay  time.Duration
	policyFile     string
	eventsFile     string
	nearThreshold  int
	nearMinWords   int
	nearMaxPages   int
	nearFollow     bool
	trapWindow     int
	withImages     bool
	requisites     bool
	render         renderFlags
	sitemaps       bool
	sitemapSeeds   []string
	sitemapOnly    bool
	ext            extFlags
	configFile     string
	profile        *profile.Profile // --config's, once loaded
}

// register defines the flags, each at the default a Go program's Config
// gets (crawl.Defaults), so that a crawl means the same by default from
// the command line and from Go.
func (f *crawlFlags) register(fs *pflag.FlagSet) {
	d := crawl.Defaults()
	fs.StringVar(&f.configFile, "config", "", "crawl profile (TOML): any of these flags' settings as keys (delay = \"2s\"), seed urls = [...] and per-host [policies.\"host\"] tables, in one file; a flag on the command line overrides it; weft config print shows the result (docs/profiles.md)")
	fs.StringVar(&f.seedsFile, "seeds", "", "file of seed URLs, one per line (# starts a comment), each optionally followed by its own limits: scope= depth= max-pages= include= exclude= (docs/seeds.md)")
	fs.StringVar(&f.dataDir, "data", "data", "directory for the crawl's WARC files and fetch log")
	fs.Int64Var(&f.maxPages, "max-pages", 0, "stop after this many page fetches (0: no limit); requisites, sitemaps and robots.txt not counted")
	fs.Int64Var(&f.maxRequisites, "max-requisites", 0, "fetch at most this many requisites and sitemaps, dropping the rest unrequested while pages go on (0: no limit; requisites come only from pages --max-pages lets through)")
	fs.IntVar(&f.maxDepth, "max-depth", d.Scope.MaxDepth, "most link hops from a seed (0: no limit)")
	fs.Int64Var(&f.maxURLsPerHost, "max-urls-per-host", d.MaxURLsPerHost, "most URLs accepted per host (0: no limit)")
	fs.IntVar(&f.maxPerPattern, "max-urls-per-pattern", d.MaxURLsPerPattern, "most URLs accepted per host for one URL pattern (the path with digits as #, generated tokens as *, no query; seeds exempt, sitemap-listed pages not): bounds calendars, faceted search, session ids in paths (0: no limit; at most 65000)")
	fs.IntVar(&f.trapBudget, "trap-budget", d.TrapBudget, "most URLs a family (one path's query variants, as faceted search makes; one dated path shape, as a calendar makes; one path's facets written in it) may queue from its own pages before they show their worth; it grows by one for each new URL elsewhere its pages lead to (up to four a page) and shrinks for copies, never more than itself ahead of the URLs queued; URLs past it stay queued last, counted, and are queued as usual in the order found as it grows (0: no budget)")
	fs.IntVar(&f.maxRepeats, "max-path-repeats", d.Scope.MaxPathRepeats, "most times one segment may occur in a URL path, a bound on relative-link traps like /a/b/a/b/... (0: no limit)")
	fs.IntVar(&f.maxRedirects, "max-redirects", d.MaxRedirects, "most redirects followed from one URL, each hop queued for its host like a link (0: none; robots.txt's own redirects are followed up to five hops regardless, as RFC 9309 asks)")
	fs.IntVar(&f.maxLinks, "max-links-per-page", d.MaxLinksPerPage, "most links read of one HTML page; a page cut there is logged with its URL and counted per host")
	fs.DurationVar(&f.delay, "delay", d.Delay, "least time between two requests to one host; a larger Crawl-delay wins")
	fs.IntVar(&f.workers, "workers", d.Workers, "concurrent fetches (never more than one per host)")
	fs.StringVar(&f.userAgent, "user-agent", defaultUserAgent(), "User-Agent header; its first token is the robots.txt product token")
	fs.UintVar(&f.expectedURLs, "expected-urls", d.ExpectedURLs, "URLs the seen set is sized for (1% Bloom false positives, each confirmed exactly)")
	fs.IntVar(&f.seenCache, "seen-cache", d.SeenCacheKeys, "URL keys known to be in the store kept in memory, so repeated links need no store lookup (about 40 bytes each at most; 0: none)")
	fs.StringVar(&f.scopeMode, "scope", string(d.Scope.Mode), "which links to follow: domain (the seeds' registrable domains), host, prefix or any")
	fs.StringArrayVar(&f.include, "include", nil, "only follow URLs matching this regular expression (repeatable)")
	fs.StringArrayVar(&f.exclude, "exclude", nil, "never follow URLs matching this regular expression (repeatable)")
	fs.StringSliceVar(&f.acceptMIME, "accept-mime", nil, "read and archive only bodies of these media types (type/subtype, type/* or */*; comma-separated or repeated; default every type); the others are archived as their headers alone")
	fs.StringSliceVar(&f.rejectMIME, "reject-mime", nil, "never read bodies of these media types (as --accept-mime; a more specific accept wins)")
	fs.StringArrayVar(&f.bodyCaps, "max-body-for", nil, "most body bytes read of a media type, TYPE=SIZE (a size as --max-body takes: application/pdf=64MiB, video/*=0 to refuse; repeatable); the most specific wins, else --max-body (default application/pdf=32MiB)")
	fs.StringSliceVar(&f.rejectExt, "reject-ext", d.Scope.DenyExtensions, "file name extensions of links not followed (images, fonts, audio, video, archives, executables); \"\" for none; a link an --include expression matches is followed whatever its extension")
	fs.StringArrayVar(&f.resolve, "resolve", nil, "HOST=ADDR: connect to ADDR for HOST, on any port, instead of asking DNS; HOST may be internationalised (bücher.test) (repeatable)")
	fs.StringArrayVar(&f.allowCIDR, "allow-cidr", nil, "allow connections to this otherwise refused network, e.g. 127.0.0.0/8 (repeatable)")
	fs.StringArrayVar(&f.denyCIDR, "deny-cidr", nil, "refuse connections to this network, even inside an --allow-cidr one (repeatable)")
	fs.StringArrayVar(&f.caFiles, "ca-file", nil, "PEM file of certificate authorities trusted besides the system's, such as a private CA (repeatable; the SSL_CERT_FILE variable replaces the system's roots instead)")
	fs.StringArrayVar(&f.insecureTLS, "insecure-tls", nil, "fetch this host even when its TLS certificate fails verification (unknown authority, another name, expired), each WARC record saying why (WARC-Certificate-Error): a host, *.domain for the hosts under it, an address, or * for all (repeatable; none by default)")
	fs.StringArrayVar(&f.stripParams, "strip-param", nil, "also remove this query parameter (case-insensitive) when canonicalising, beside the tracking and session-id defaults (repeatable)")
	fs.Var(bytesize.NewValue(&f.maxBody, d.Fetch.MaxBodyBytes), "max-body", "most body bytes read per response, before and after decompression; a size, as every flag of type size takes: "+bytesize.Syntax)
	fs.DurationVar(&f.timeout, "timeout", d.Fetch.Timeout, "total time allowed for one request")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", d.Fetch.ConnectTimeout, "time allowed to connect")
	fs.DurationVar(&f.headerTimeout, "header-timeout", d.Fetch.ResponseHeaderTimeout, "time allowed for the response headers")
	fs.StringVar(&f.cookiesFile, "cookies", "", "Netscape cookies.txt file (as curl, wget and browser extensions write it) whose cookies start the crawl's cookie jar, to crawl signed in; each cookie goes only to the hosts its domain covers; the WARC request records hold the Cookie fields sent (docs/cookies.md)")
	fs.StringArrayVar(&f.headers, "header", nil, "'Name: value' header field sent with every request to the hosts under the seeds' registrable domains, never to another host (repeatable; a policy's \"headers\" go to its host alone); the WARC request records hold it, logs do not (docs/cookies.md)")
	fs.BoolVar(&f.http2, "http2", false, "offer HTTP/2 to TLS servers; its exchanges are archived in HTTP/1.1 form, not as the bytes sent (HTTP/1.1 exchanges are)")
	fs.DurationVar(&f.idleTimeout, "idle-timeout", d.Fetch.IdleTimeout, "longest silence while reading a response")
	fs.DurationVar(&f.dnsMinTTL, "dns-min-ttl", d.Fetch.DNSMinTTL, "least time a DNS answer is kept, whatever its TTL (0: none)")
	fs.DurationVar(&f.dnsMaxTTL, "dns-max-ttl", d.Fetch.DNSMaxTTL, "longest time a DNS answer is kept, whatever its TTL")
	fs.BoolVar(&f.fresh, "fresh", false, "start over: discard the crawl state under --data instead of resuming it (WARC files are kept)")
	fs.DurationVar(&f.grace, "grace", d.Grace, "on Ctrl-C or SIGTERM, how long fetches in flight may finish")
	fs.Var(bytesize.NewValue(&f.warcMaxSize, d.WARCMaxFileSize), "warc-max-size", "rotate WARC files at this size")
	fs.StringArrayVar(&f.dedupFrom, "dedup-from", nil, "an earlier crawl's index: a CDXJ file (weft cdx's or pywb's), a WACZ file or a weft data directory; a payload captured there is archived as a revisit of that capture (repeatable)")
	fs.StringVar(&f.crawlLog, "crawl-log", "", "also write every fetch to this `file` as a line of Heritrix's crawl.log, appended (fetches.jsonl under --data is written either way)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	fs.IntVar(&f.activeHosts, "active-hosts", 0, "hosts crawled at once, each with a back queue in memory (0: max(1024, 4 x workers))")
	fs.IntVar(&f.frontBuffer, "front-buffer", d.FrontBuffer, "URLs of each of the 3 priority queues kept in memory; the rest is on disk")
	fs.IntVar(&f.headSize, "head-size", d.HeadSize, "URLs of each active host kept in memory; the rest is on disk")
	fs.IntVar(&f.hostCache, "host-cache", d.HostCache, "hosts whose per-host state (clock, URL and error counts) is kept in memory, and a quarter as many parsed robots.txt files; the least recently used are evicted to disk and read back")
	fs.Var(bytesize.NewValue(&f.memoryLimit, DefaultMemoryLimit), "memory-limit", memoryLimitUsage)
	fs.Float64Var(&f.latencyFactor, "latency-factor", d.Politeness.LatencyFactor, "make a host's gap at least this multiple of its last response time, and a timed-out or cut request's wait at least this multiple of its time (0: off)")
	fs.DurationVar(&f.maxBackoff, "max-backoff", d.Politeness.MaxBackoff, "ceiling of the backoff that doubles on each 429 or 503 without Retry-After")
	fs.DurationVar(&f.maxRetryAfter, "max-retry-after", d.Politeness.MaxRetryAfter, "longest Retry-After honoured")
	fs.IntVar(&f.parkAfter, "park-after", d.Politeness.ParkAfter, "failures in a row (timeouts, connection errors, 5xx) that park a host, for --park-for, doubled each time (-1: never)")
	fs.DurationVar(&f.parkFor, "park-for", d.Politeness.ParkFor, "how long a host is first parked")
	fs.IntVar(&f.giveUpAfter, "give-up-after", d.Politeness.GiveUpAfter, "failures more than the host's answers, or 429 answers in a row over at least --max-backoff, after which a host is given up and its queued URLs dropped (-1: never)")
	fs.StringVar(&f.ipGroup, "ip-group", d.IPGroup, "hosts sharing a server share a second clock: ip (same address), subnet (same /24 or /64) or off")
	fs.DurationVar(&f.ipGap, "ip-gap", 0, "least time between request starts to one server (0: a quarter of --delay)")
	fs.DurationVar(&f.robotsTTL, "robots-ttl", d.RobotsTTL, "how long a robots.txt answer is used before it is fetched again")
	fs.IntVar(&f.robotsAttempts, "robots-attempts", d.RobotsAttempts, "failed robots.txt fetches in a row (5xx, 429, network error) before a host counts as completely disallowed; until then its URLs wait")
	fs.DurationVar(&f.robotsWait, "robots-retry", d.RobotsRetryWait, "wait before fetching a failed robots.txt again, doubled after each failure")
	fs.DurationVar(&f.failureWait, "failure-wait", d.FailureWait, "a crawl that ends (weft crawl) stops waiting for hosts whose requests fail (a Retry-After, backoff, a park, a robots.txt retry) this long after its last answered request, and leaves their URLs queued for the next run on --data; held hosts are waited for, and so is the clock of a host that answers pages whose last page request, alone since its last answer, was cut or backed off (0: wait for every clock, up to --max-retry-after)")
	fs.DurationVar(&f.maxCrawlDelay, "max-crawl-delay", d.MaxCrawlDelay, "longest Crawl-delay waited between two requests to a host: a host whose robots.txt asks for more is not crawled (its URLs dropped as \"crawl-delay\", the summary names it) rather than requested sooner than it asked (0: honour any Crawl-delay, up to 30 days; weft serve: 0 unless given)")
	fs.DurationVar(&f.robotsLastGood, "robots-last-good", 0, "Google's rule for an unreachable robots.txt: use the last good copy up to this age, and crawl as if there were none once it has failed this long (e.g. 720h; 0: RFC 9309's complete disallow)")
	fs.StringVar(&f.policyFile, "policy", "", "JSON file of per-host policies that make weft more polite, or boost which URLs go first: {\"host\": {\"crawl_delay\": \"5s\", \"disallowed\": [\"/path\"], \"max_urls\": 1000, \"boost\": 4}}")
	f.s3.register(fs)
	f.ext.register(fs)
	fs.StringVar(&f.clusterURL, "cluster", "", "run as one node of a crawl spread over several, which meet at this NATS JetStream URL (nats://host:4222): the node crawls the hosts of the partitions it owns (see README, Scale-out)")
	fs.StringVar(&f.nodeName, "node", "", "this node's name in the cluster, unique (with --cluster)")
	fs.DurationVar(&f.leaseTTL, "lease-ttl", jetstream.DefaultLeaseTTL, "with --cluster: life of a partition lease not renewed; a node cut off from NATS stops fetching within half of it, and a dead node's partitions move after it (set by the first node of a crawl)")
	fs.StringVar(&f.advertise, "advertise", "", "with --cluster and --http: the host:port the other nodes reach this node's API at, for GET /v1/cluster (default: the --http address, the machine's name for an unspecified host)")
	fs.DurationVar(&f.snapEvery, "snapshot-every", cluster.DefaultSnapshotEvery, "with --cluster: snapshot a partition this often if its logs grew (to the --s3-* store, else JetStream's object store), then purge the logs it covers; 0 means this node makes none")
	fs.IntVar(&f.snapAfter, "snapshot-after", cluster.DefaultSnapshotAfter, "with --cluster: snapshot a partition sooner, once this many messages were logged in it since its last snapshot")
	fs.IntVar(&f.replicas, "cluster-replicas", 0, "with --cluster: copies of the crawl's streams and buckets when this node creates them; 0 means 3 on a NATS cluster of three or more servers, else 1")
	fs.StringVar(&f.natsURL, "events-nats", "", "also publish each capture's event to NATS JetStream at this URL (nats://host:4222): the page events an indexer reads (see README)")
	fs.StringVar(&f.pagesStream, "events-stream", jetstream.DefaultPagesStream, "the JetStream stream of page events, created if missing")
	fs.StringVar(&f.pagesSubject, "events-subject", jetstream.DefaultPagesSubject, "the subject prefix of page events: each goes to PREFIX.<partition of its host>")
	fs.StringVar(&f.summaryFile, "summary", "", "also write the end-of-crawl summary to this file as JSON (counts by status, error kind, rejection reason, trap host...)")
	fs.StringVar(&f.eventsFile, "events", "", "append a JSON line per archived capture to this file (url, fetched_at, status, payload_digest, warc_file, offset, length, revisit, near_dup_of), for an indexer to tail")
	fs.IntVar(&f.nearThreshold, "near-dup-threshold", d.NearDupThreshold, "SimHash distance in bits (1 to 11) within which a page is a near-duplicate of an earlier one: flagged in the capture index, its links not followed unless it links to things the earlier one does not (-1: do not judge; a recrawl then counts a token or a nonce as a change, as the words are not read)")
	fs.IntVar(&f.nearMinWords, "near-dup-min-words", d.NearDupMinWords, "pages with fewer visible words are not judged for near-duplicates")
	fs.IntVar(&f.nearMaxPages, "near-dup-max-pages", d.NearDupMaxPages, "pages the near-duplicate index holds in memory, 56 bytes each; later pages are judged against them, not added")
	fs.BoolVar(&f.nearFollow, "near-dup-follow", false, "follow the links of near-duplicate pages too (an archive crawl that wants every link; the trap cut-off still applies)")
	fs.IntVar(&f.trapWindow, "trap-window", d.NearDupTrapWindow, "cut off the directory a host's near-duplicates are under, as deep as they are (the host, when they are all over it), when more than half of its last this many judged pages were near-duplicates: no new URL in it admitted (1 to 64; -1: never)")
	fs.BoolVar(&f.sitemaps, "sitemaps", !d.NoSitemaps, "fetch each host's robots.txt Sitemap: files and /sitemap.xml, and admit the URLs they list like links (--sitemaps=false: links only)")
	fs.StringArrayVar(&f.sitemapSeeds, "sitemap", nil, "a seed that is a sitemap or sitemap index URL, or a file of them, one per line: every URL it lists is a seed (repeatable)")
	fs.BoolVar(&f.sitemapOnly, "sitemap-only", false, "crawl the seeds and the URLs their sitemaps list, with their redirects and requisites, and follow no other link (no page's links, no sitemap a robots.txt names)")
	fs.BoolVar(&f.requisites, "requisites", !d.NoRequisites, "fetch and archive what each HTML page needs to render (style sheets and their url()s, scripts, images and srcset, fonts, media, favicon), through robots.txt, politeness and the SSRF guard, one hop past the scope, their links not followed, so that the archive replays (--requisites=false: pages only)")
	f.render.register(fs, d.Render)
	fs.BoolVar(&f.withImages, "with-images", false, "with --requisites=false, still fetch the images pages show (<img src>); the images are part of --requisites")
	fs.StringVar(&f.progress, "progress", "auto", "live progress line on stderr: auto (on a terminal), always or never")
	fs.StringVar(&f.httpAddr, "http", "", "serve the operator API and Prometheus /metrics on this address, e.g. 127.0.0.1:8080 (off when empty)")
	fs.StringVar(&f.httpToken, "http-token", "", "bearer token of the operator API (else --http-token-file, else $WEFT_HTTP_TOKEN); required for changes, and for everything off loopback")
	fs.StringVar(&f.httpTokenFile, "http-token-file", "", "file whose first line is the operator API's bearer token")
	fs.SetAnnotation("http-token", profile.SecretAnnotation, []string{"a printed profile leaves it out"})
	fs.SetAnnotation("header", profile.SecretAnnotation, []string{"a printed profile leaves it out"})
}

// loadProfile applies --config's profile to the flags the command line
// left alone, and returns the seeds: the arguments, else the profile's.
func (f *crawlFlags) loadProfile(fs *pflag.FlagSet, args []string) ([]string, error) {
	if f.configFile == "" {
		return args, nil
	}
	p, err := profile.Load(f.configFile)
	if err != nil {
		return nil, usagef("--config: %v", err)
	}
	if err := p.Apply(fs, "config"); err != nil {
		return nil, usageError{err}
	}
	f.profile = p
	if len(args) == 0 && len(p.URLs) > 0 {
		if _, err := collectSeeds("", p.URLs, "url"); err != nil {
			return nil, usageError{p.AtURLs(err)}
		}
		args = p.URLs
	}
	return args, nil
}

// config turns the flags and positional seeds into the crawl's Config
// through weft.Config, as a Go program's settings go (settings.Crawl),
// and adds the per-host policies of --config's profile, which are not a
// flag. Every error names the flag, file or line at fault.
func (f *crawlFlags) config(args []string, stderr io.Writer) (crawl.Config, error) {
	wc, err := f.settings(args, stderr)
	if err != nil {
		return crawl.Config{}, err
	}
	var policies *policy.Set
	if f.profile.HasPolicies() {
		if f.policyFile != "" {
			return crawl.Config{}, usagef("--policy %s and the [policies] tables of %s: give per-host policies in one place", f.policyFile, f.profile.File)
		}
		if policies, err = f.profile.PolicySet(policy.Limits{Delay: f.delay, MaxURLs: f.maxURLsPerHost}); err != nil {
			return crawl.Config{}, usageError{err}
		}
	}
	cfg, err := settings.Crawl(wc)
	if err != nil {
		return crawl.Config{}, flagError(err)
	}
	if policies != nil {
		cfg.Policies = policies
	}
	return cfg, nil
}

// settings turns the flags and positional seeds into a weft.Config: the
// flags each set their field (flagFields), a 0 that means none becoming
// the negative number that says it there. What only the command line can
// get wrong is checked here, naming the flag.
func (f *crawlFlags) settings(args []string, stderr io.Writer) (weft.Config, error) {
	var cfg weft.Config
	seeds, seedOpts, err := readSeedOptions(f.seedsFile, args, "argument")
	if err != nil {
		return cfg, err
	}
	var sitemaps []string
	for _, v := range f.sitemapSeeds {
		list, err := readSitemapSeeds(v)
		if err != nil {
			return cfg, err
		}
		sitemaps = append(sitemaps, list...)
	}
	if len(seeds) == 0 && len(sitemaps) == 0 {
		return cfg, errNoSeeds
	}
	if _, err := scope.ParseMode(f.scopeMode); err != nil {
		return cfg, usagef("--scope: %v", err)
	}
	if f.workers <= 0 {
		return cfg, usagef("--workers %d: must be at least 1", f.workers)
	}
	if f.maxLinks <= 0 {
		return cfg, usagef("--max-links-per-page %d: must be at least 1", f.maxLinks)
	}
	if f.robotsAttempts <= 0 {
		return cfg, usagef("--robots-attempts %d: must be at least 1", f.robotsAttempts)
	}
	if f.robotsWait <= 0 || f.robotsTTL <= 0 {
		return cfg, usagef("--robots-retry and --robots-ttl must be positive")
	}
	if f.nearThreshold != -1 && (f.nearThreshold < 1 || f.nearThreshold > simhash.Guaranteed) {
		return cfg, usagef("--near-dup-threshold %d: want 1 to %d bits, or -1 to not judge", f.nearThreshold, simhash.Guaranteed)
	}
	if f.trapWindow != -1 && (f.trapWindow < 1 || f.trapWindow > 64) {
		return cfg, usagef("--trap-window %d: want 1 to 64 pages, or -1 for no cut-off", f.trapWindow)
	}
	if f.nearMinWords < 1 || f.nearMaxPages < 1 {
		return cfg, usagef("--near-dup-min-words and --near-dup-max-pages must be at least 1")
	}
	for _, v := range []struct {
		name string
		d    time.Duration
	}{{"--delay", f.delay}, {"--max-backoff", f.maxBackoff}, {"--max-retry-after", f.maxRetryAfter}, {"--park-for", f.parkFor}, {"--ip-gap", f.ipGap}, {"--robots-ttl", f.robotsTTL}, {"--robots-retry", f.robotsWait}, {"--failure-wait", f.failureWait}, {"--robots-last-good", f.robotsLastGood}, {"--max-crawl-delay", f.maxCrawlDelay}, {"--timeout", f.timeout}, {"--connect-timeout", f.connectTimeout}, {"--header-timeout", f.headerTimeout}, {"--idle-timeout", f.idleTimeout}, {"--grace", f.grace}, {"--dns-min-ttl", f.dnsMinTTL}, {"--dns-max-ttl", f.dnsMaxTTL}} {
		if v.d < 0 {
			return cfg, usagef("%s %v: must not be negative", v.name, v.d)
		}
	}
	if f.dnsMaxTTL == 0 || f.dnsMinTTL > f.dnsMaxTTL {
		return cfg, usagef("--dns-min-ttl %v and --dns-max-ttl %v: want 0 <= min <= max and max > 0", f.dnsMinTTL, f.dnsMaxTTL)
	}
	for _, v := range []struct {
		name string
		n    int64
	}{{"--max-pages", f.maxPages}, {"--max-requisites", f.maxRequisites}, {"--max-urls-per-host", f.maxURLsPerHost}, {"--max-body", f.maxBody}, {"--warc-max-size", f.warcMaxSize}, {"--max-depth", int64(f.maxDepth)},
		{"--max-urls-per-pattern", int64(f.maxPerPattern)}, {"--trap-budget", int64(f.trapBudget)}, {"--max-path-repeats", int64(f.maxRepeats)}, {"--max-redirects", int64(f.maxRedirects)},
		{"--active-hosts", int64(f.activeHosts)}, {"--front-buffer", int64(f.frontBuffer)}, {"--head-size", int64(f.headSize)}, {"--host-cache", int64(f.hostCache)}, {"--seen-cache", int64(f.seenCache)}} {
		if v.n < 0 {
			return cfg, usagef("%s %d: must not be negative", v.name, v.n)
		}
	}
	if f.maxPerPattern > 65000 {
		return cfg, usagef("--max-urls-per-pattern %d: at most 65000", f.maxPerPattern)
	}
	if f.latencyFactor < 0 || math.IsNaN(f.latencyFactor) || math.IsInf(f.latencyFactor, 0) {
		return cfg, usagef("--latency-factor %v: must be a number, 0 or more", f.latencyFactor)
	}
	if f.ipGroup != crawl.IPGroupIP && f.ipGroup != crawl.IPGroupSubnet && f.ipGroup != crawl.IPGroupOff {
		return cfg, usagef("--ip-group %q: want ip, subnet or off", f.ipGroup)
	}
	if strings.TrimSpace(f.userAgent) == "" {
		return cfg, usagef("--user-agent: must not be empty (robots.txt rules are chosen by its product token)")
	}
	if f.maxBody != 0 && f.maxBody < robots.MaxBytes {
		return cfg, usagef("--max-body %d: must be at least %s, the least a robots.txt may need", f.maxBody, bytesize.Format(robots.MaxBytes))
	}
	if err := f.render.check(); err != nil {
		return cfg, err
	}
	for _, re := range []struct {
		flag string
		exps []string
	}{{"--include", f.include}, {"--exclude", f.exclude}} {
		for _, e := range re.exps {
			if _, err := regexp.Compile(e); err != nil {
				return cfg, usagef("%s %q: %v", re.flag, e, err)
			}
		}
	}
	resolve := map[string]string{}
	for _, r := range f.resolve {
		host, addr, ok := strings.Cut(r, "=")
		if !ok || host == "" {
			return cfg, usagef("--resolve %q: want HOST=ADDR", r)
		}
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			return cfg, usagef("--resolve %q: %q is not an IP address", r, addr)
		}
		name, err := fetch.ResolveKey(host)
		if err != nil {
			return cfg, usagef("--resolve %q: %v", r, err)
		}
		if prev, ok := resolve[name]; ok && prev != ip.String() {
			return cfg, usagef("--resolve %q: %s is given %s already", r, name, prev)
		}
		resolve[name] = ip.String()
	}
	allow, err := parseCIDRs("--allow-cidr", f.allowCIDR)
	if err != nil {
		return cfg, err
	}
	deny, err := parseCIDRs("--deny-cidr", f.denyCIDR)
	if err != nil {
		return cfg, err
	}
	for _, h := range f.insecureTLS {
		if _, err := fetch.InsecureTLSKey(h); err != nil {
			return cfg, usagef("--insecure-tls %q: %v", h, err)
		}
	}
	var headers http.Header
	for i, h := range f.headers {
		name, value, err := fetch.ParseHeader(h)
		if err != nil {
			return cfg, usagef("--header (#%d): %v", i+1, err) // not the value: it may be a secret
		}
		if headers == nil {
			headers = http.Header{}
		}
		headers.Add(name, value)
	}
	level, err := parseLevel(f.logLevel)
	if err != nil {
		return cfg, err
	}
	rejectExt := []string{} // none, unless the flag names some
	for _, e := range f.rejectExt {
		if e = strings.TrimSpace(e); e != "" {
			rejectExt = append(rejectExt, e)
		}
	}
	var bodyFor map[string]int64
	if len(f.bodyCaps) > 0 {
		bodyFor = map[string]int64{}
		for _, c := range f.bodyCaps {
			cp, err := media.ParseCap(c)
			if err != nil {
				return cfg, usagef("--max-body-for: %v", err)
			}
			if _, dup := bodyFor[cp.Pattern]; !dup { // the first of two alike wins
				bodyFor[cp.Pattern] = cp.Bytes
			}
		}
	}
	if f.progress != "auto" && f.progress != "always" && f.progress != "never" {
		return cfg, usagef("--progress %q: want auto, always or never", f.progress)
	}
	if err := f.ext.check(); err != nil {
		return cfg, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	handlers, err := f.ext.commands(logger)
	if err != nil {
		return cfg, err
	}
	// On the command line 0 is "no limit" or "none" for these, which
	// weft.Config spells as a negative number: its zero is the default.
	// --latency-factor 0 is off; --dns-min-ttl 0 no floor.
	cfg = weft.Config{
		Seeds: seeds, Sitemaps: sitemaps, SeedOptions: seedOpts, SitemapOnly: f.sitemapOnly, DataDir: f.dataDir, UserAgent: f.userAgent, Fresh: f.fresh,
		Delay: cmp.Or(f.delay, -1), Workers: f.workers, MaxPages: f.maxPages, MaxRequisites: f.maxRequisites,
		MaxDepth: cmp.Or(f.maxDepth, -1), MaxURLsPerHost: cmp.Or(f.maxURLsPerHost, -1),
		MaxURLsPerPattern: cmp.Or(f.maxPerPattern, -1), TrapBudget: cmp.Or(f.trapBudget, -1), MaxPathRepeats: cmp.Or(f.maxRepeats, -1),
		MaxRedirects: cmp.Or(f.maxRedirects, -1), MaxLinksPerPage: f.maxLinks,
		Grace: f.grace, FailureWait: cmp.Or(f.failureWait, -1),

		ScopeMode: f.scopeMode, Include: f.include, Exclude: f.exclude, RejectExtensions: rejectExt,
		StripParams: f.stripParams, Handlers: handlers,

		AcceptMIME: f.acceptMIME, RejectMIME: f.rejectMIME, MaxBodyBytes: f.maxBody, MaxBodyFor: bodyFor,
		NoRequisites: !f.requisites, WithImages: f.withImages, NoSitemaps: !f.sitemaps,

		RenderMode: f.render.mode, RenderChromium: f.render.chromium, RenderWorkers: f.render.workers,
		RenderTimeout: f.render.timeout, RenderIdle: f.render.idle, RenderScrolls: cmp.Or(f.render.scrolls, -1),
		RenderClicks: cmp.Or(f.render.clicks, -1), RenderScreenshot: f.render.screenshot, RenderMemory: cmp.Or(f.render.memory, -1),
		RenderGiveUpAfter: f.render.giveUp, RenderNavigations: cmp.Or(f.render.navs, -1),
		RenderBehaviourTime: f.render.behaviour,

		NearDupThreshold: f.nearThreshold, NearDupMinWords: f.nearMinWords, NearDupMaxPages: f.nearMaxPages,
		NearDupFollow: f.nearFollow, NearDupTrapWindow: f.trapWindow,

		AllowNetworks: allow, DenyNetworks: deny, Resolve: resolve, CAFiles: f.caFiles, InsecureTLS: f.insecureTLS,
		CookiesFile: f.cookiesFile, Headers: headers,
		HTTP2: f.http2, Timeout: f.timeout, ConnectTimeout: f.connectTimeout, HeaderTimeout: f.headerTimeout,
		IdleTimeout: f.idleTimeout, DNSMinTTL: cmp.Or(f.dnsMinTTL, -1), DNSMaxTTL: f.dnsMaxTTL,

		RobotsTTL: f.robotsTTL, RobotsAttempts: f.robotsAttempts, RobotsRetryWait: f.robotsWait,
		RobotsLastGood: f.robotsLastGood, MaxCrawlDelay: cmp.Or(f.maxCrawlDelay, -1), PolicyFile: f.policyFile,

		LatencyFactor: cmp.Or(f.latencyFactor, -1), MaxBackoff: f.maxBackoff, MaxRetryAfter: f.maxRetryAfter,
		ParkAfter: f.parkAfter, ParkFor: f.parkFor, GiveUpAfter: f.giveUpAfter, IPGroup: f.ipGroup, IPGap: f.ipGap,

		ExpectedURLs: f.expectedURLs, SeenCacheKeys: cmp.Or(f.seenCache, -1), ActiveHosts: f.activeHosts,
		FrontBuffer: f.frontBuffer, HeadSize: f.headSize, HostCache: f.hostCache, WARCMaxSize: f.warcMaxSize,
		DedupFrom: f.dedupFrom, CrawlLog: f.crawlLog,

		Logger: logger,
	}
	f.s3.set(&cfg)
	return cfg, nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return l, usagef("--log-level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

var errNoSeeds = usagef("no seeds: give seed URLs as arguments, with --seeds FILE or with --sitemap")

// collectSeeds reads the seed file, then the positional seeds (readSeeds);
// none is an error.
func collectSeeds(file string, args []string, argName string) ([]string, error) {
	seeds, err := readSeeds(file, args, argName)
	if err == nil && len(seeds) == 0 {
		err = errNoSeeds
	}
	return seeds, err
}

// checkSeed checks that s is an absolute http(s) URL; its error names
// where it was (a file and line, a flag, an argument).
func checkSeed(c *canon.Canonicalizer, where, s string) error {
	if _, err := canon.ParseSeed(c, s); err != nil {
		var se *canon.SeedError
		if errors.As(err, &se) {
			return usagef("%s: %s", where, se.Explain())
		}
		return usagef("%s: %v", where, err)
	}
	return nil
}

// readSitemapSeeds reads a value of --sitemap: a sitemap's URL, or a
// file of them.
func readSitemapSeeds(v string) ([]string, error) {
	c := canon.New(canon.Config{})
	if strings.Contains(v, "://") {
		if err := checkSeed(c, "--sitemap "+v, v); err != nil {
			return nil, err
		}
		return []string{v}, nil
	}
	var out []string
	err := readURLFile(v, "--sitemap", func(where, s string) error {
		out = append(out, s)
		return checkSeed(c, where, s)
	})
	if err == nil && len(out) == 0 {
		err = usagef("--sitemap %s: no URL in the file", v)
	}
	return out, err
}

// readSeeds reads the seed file, then the positional seeds, checking
// each is an absolute http(s) URL. Errors name the file and line (or the
// argument: argName and its number), the text and what a seed must be.
func readSeeds(file string, args []string, argName string) ([]string, error) {
	list, _, err := readSeedOptions(file, args, argName)
	return list, err
}

// readSeedOptions is readSeeds with each seed's own limits: a line (an
// argument, a profile's URL) is a URL, then optionally fields such as
// scope=host depth=3 max-pages=500 include=RE exclude=RE (seeds.ParseLine).
func readSeedOptions(file string, args []string, argName string) ([]string, map[string]weft.SeedOptions, error) {
	var list []string
	var opts map[string]weft.SeedOptions
	c := canon.New(canon.Config{})
	check := func(where, line string) error {
		fields := strings.Fields(line)
		if err := checkSeed(c, where, fields[0]); err != nil {
			if !slices.ContainsFunc(fields[1:], func(f string) bool { return !strings.Contains(f, "=") }) {
				return err // a URL with its seed's fields
			}
			return checkSeed(c, where, line) // words, not fields: say so of the whole line
		}
		s, o, err := seeds.ParseLine(line)
		if err != nil {
			return usagef("%s: %v", where, err)
		}
		list = append(list, s)
		if !o.IsZero() {
			if opts == nil {
				opts = map[string]weft.SeedOptions{}
			}
			opts[s] = o
		}
		return checkSeed(c, where, s)
	}
	if file != "" {
		if err := readURLFile(file, "--seeds", check); err != nil {
			return nil, nil, err
		}
	}
	for i, a := range args {
		if err := check(fmt.Sprintf("%s %d", argName, i+1), a); err != nil {
			return nil, nil, err
		}
	}
	return list, opts, nil
}

// readURLFile calls fn with each URL of a file of them, one per line (#
// starts a comment), and where it is ("FILE:LINE"); flag names the file's
// flag in an error opening it.
func readURLFile(file, flag string, fn func(where, s string) error) error {
	fh, err := os.Open(file)
	if err != nil {
		return usagef("%s: %v", flag, err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff") // a UTF-8 byte order mark
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if err := fn(fmt.Sprintf("%s:%d", file, n), line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return usagef("%s:%d: %v", file, n+1, err)
	}
	return nil
}

func newCrawlCmd() *cobra.Command {
	var f crawlFlags
	cmd := &cobra.Command{
		Use:   "crawl [flags] [SEED...]",
		Short: "Crawl from seeds within robots.txt and per-host politeness until nothing is left",
		Long: `Crawl from the seed URLs (arguments and/or --seeds FILE), obeying robots.txt and
a per-host delay, writing WARC files and a fetch log under --data. A --data
directory that holds a crawl is resumed (seeds given again are deduplicated
like any URL), even after the process was killed; --fresh starts over. The crawl
ends when the frontier drains or --max-pages is reached (exit 0). Ctrl-C or
SIGTERM stops taking new URLs, lets fetches in flight finish for --grace,
closes the WARC files, prints the summary and exits 0; a second Ctrl-C exits
at once (130).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := f.loadProfile(cmd.Flags(), args)
			if err != nil {
				return err
			}
			cfg, err := f.config(args, cmd.ErrOrStderr())
			if err != nil {
				return f.profile.Locate(err)
			}
			return f.run(cmd, cfg)
		},
	}
	f.register(cmd.Flags())
	return cmd
}

// run opens the --events sink, if any, and runs the crawl cfg describes.
func (f *crawlFlags) run(cmd *cobra.Command, cfg crawl.Config) error {
	defer closeHandlers(cfg.Extensions)
	if _, err := applyMemoryLimit(f.memoryLimit); err != nil {
		return err
	}
	closeExt, err := f.ext.open(&cfg)
	defer closeExt()
	if err != nil {
		return err
	}
	if f.eventsFile != "" {
		ev, err := events.OpenFile(f.eventsFile)
		if err != nil {
			return usagef("--events: %v", err)
		}
		defer ev.Close()
		cfg.Sinks = append(cfg.Sinks, ev)
	}
	if f.natsURL != "" {
		ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
		pages, err := jetstream.OpenPages(ctx, jetstream.PagesConfig{URL: f.natsURL, Stream: f.pagesStream, Subject: f.pagesSubject, Partitions: cfg.Partitions})
		cancel()
		if err != nil {
			return usagef("--events-nats: %v", err)
		}
		defer pages.Close()
		cfg.Sinks = append(cfg.Sinks, pages)
	}
	if s, ok := cfg.Objects.(*objstore.Store); ok {
		// A bucket that is missing or refuses the keys is better said now
		// than at the first finished file.
		ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
		err := s.Check(ctx)
		cancel()
		if err != nil {
			return usagef("--s3-bucket: %v", err)
		}
	}
	opts := runOpts{progress: f.progress, summaryFile: f.summaryFile}
	if f.httpAddr != "" {
		token, err := f.token()
		if err != nil {
			return err
		}
		opts.api = &api.Config{Addr: f.httpAddr, Token: token, Logger: cfg.Logger}
		if _, err := api.New(*opts.api, api.Resources{}); err != nil { // checked before the crawl opens anything
			return usagef("--http: %v", err)
		}
	}
	if f.clusterURL != "" {
		if cfg.MaxPages > 0 {
			return usagef("--max-pages: a node of a cluster stops when the whole cluster's crawl has drained, not at a count of its own")
		}
		if f.leaseTTL < time.Second || f.replicas < 0 || f.replicas > 5 {
			return usagef("--lease-ttl must be at least 1s, and --cluster-replicas 0 to 5")
		}
		if f.snapEvery < 0 || (f.snapEvery > 0 && f.snapEvery < time.Second) || f.snapAfter < 1 {
			return usagef("--snapshot-every must be 0 (none) or at least 1s, and --snapshot-after at least 1")
		}
		if cfg.Delay >= f.leaseTTL/2 {
			return usagef("--delay %v: must be under half --lease-ttl (%v), which is all that parts a dead node's last request to a host from the next owner's first", cfg.Delay, f.leaseTTL)
		}
		sum, err := runCluster(cmd.Context(), cfg, clusterOpts{url: f.clusterURL, node: f.nodeName, ttl: f.leaseTTL, replicas: f.replicas, advertise: f.advertise,
			snapEvery: f.snapEvery, snapAfter: f.snapAfter}, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
		return writeSummary(opts.summaryFile, sum, err)
	}
	sum, err := runCrawl(cmd.Context(), cfg, opts, cmd.OutOrStdout(), cmd.ErrOrStderr())
	if err == nil && noSeedFetched(sum) {
		return errNoSeedFetched
	}
	return err
}

// errNoSeedFetched ends a crawl none of whose seeds got a response: it
// did nothing, and a script must not take that for success.
var errNoSeedFetched = errors.New("no seed could be fetched; the summary above says why, seed by seed")

// noSeedFetched reports whether a crawl that ran its course fetched none
// of its seeds.
func noSeedFetched(sum crawl.Summary) bool {
	return sum.Seeds > 0 && sum.SeedsFetched == 0 && (sum.StoppedBy == "drained" || sum.StoppedBy == "deferred")
}

// writeSummary writes the summary as JSON to path, if one is given.
func writeSummary(path string, sum crawl.Summary, err error) error {
	if path == "" {
		return err
	}
	b, jerr := json.MarshalIndent(sum, "", "  ")
	if jerr == nil {
		jerr = os.WriteFile(path, append(b, '\n'), 0o644)
	}
	if jerr != nil {
		err = errors.Join(err, fmt.Errorf("--summary: %w", jerr))
	}
	return err
}

// token is the operator API's bearer token: --http-token, else the first
// line of --http-token-file, else $WEFT_HTTP_TOKEN.
func (f *crawlFlags) token() (string, error) {
	switch {
	case f.httpToken != "":
		return f.httpToken, nil
	case f.httpTokenFile != "":
		b, err := os.ReadFile(f.httpTokenFile)
		if err != nil {
			return "", usagef("--http-token-file: %v", err)
		}
		tok, _, _ := strings.Cut(string(b), "\n")
		if tok = strings.TrimSpace(tok); tok == "" {
			return "", usagef("--http-token-file %s: the first line is empty", f.httpTokenFile)
		}
		return tok, nil
	}
	return os.Getenv("WEFT_HTTP_TOKEN"), nil
}

// runOpts are how runCrawl shows a crawl: its progress line, and the
// operator API when api is set.
type runOpts struct {
	progress    string
	api         *api.Config
	summaryFile string // --summary: the Summary as JSON, for scripts
}

// runCrawl runs one crawl with a progress line (and the operator API when
// asked) and prints its summary.
func runCrawl(ctx context.Context, cfg crawl.Config, opts runOpts, stdout, stderr io.Writer) (crawl.Summary, error) {
	if err := cfg.Validate(); err != nil {
		return crawl.Summary{}, usageError{err}
	}
	c, err := crawl.New(cfg) // what fails now is the machine (the data directory), not the input
	if err != nil {
		return crawl.Summary{}, err
	}
	if c.Resumed() {
		fmt.Fprintf(stderr, "weft: resuming the crawl in %s (--fresh starts over)\n", cfg.DataDir)
	}
	if opts.api != nil {
		srv, err := api.New(*opts.api, operator.Resources(c))
		if err == nil {
			err = srv.Start()
		}
		if err != nil {
			c.Discard()
			return crawl.Summary{}, err
		}
		fmt.Fprintf(stderr, "weft: operator API on http://%s (metrics at /metrics)\n", srv.Addr())
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			srv.Close(sctx)
		}()
	}
	stop := startProgress(ctx, c, opts.progress, stderr)
	sum, err := c.Run(ctx)
	stop()
	sum.Write(stdout)
	fmt.Fprintf(stdout, "  data:       %s\n", cfg.DataDir)
	err = writeSummary(opts.summaryFile, sum, err)
	// An interrupted crawl stopped as asked: fetches in flight finished or
	// were cut after --grace, the WARC files are closed. That is success.
	return sum, err
}

// parseCIDRs parses the values of a repeatable CIDR flag.
func parseCIDRs(flag string, vals []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, c := range vals {
		p, err := netip.ParsePrefix(c)
		if err != nil {
			return nil, usagef("%s %q: %v", flag, c, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
