// Package synthweb serves a deterministic synthetic web of many hosts on
// loopback addresses, for the crawler's end-to-end tests, benchmarks and
// demo, and exposes the ground truth (pages, links, robots rules, request
// log) that a crawl is judged against.
//
// Each host listens on its own 127.0.0.0/8 address; host names are never
// resolved through DNS: the crawler is given Resolve() instead. The same
// Seed and Config always produce the same hosts, pages, links and bodies;
// only the (ephemeral) port numbers differ between runs.
//
// Linux routes all of 127.0.0.0/8 to the loopback interface; other systems
// may need aliases configured for addresses beyond 127.0.0.1.
package synthweb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes a synthetic web. The zero value is a valid 100-host web.
type Config struct {
	// Seed determines everything but port numbers.
	Seed int64
	// Hosts is the number of ordinary hosts; zero means 100.
	Hosts int
	// PagesPerHost is the mean number of HTML pages per host; zero means
	// 30. Each host gets a deterministic count in [PagesPerHost/2,
	// PagesPerHost*3/2], but never fewer than 12, the pages that every
	// host needs for its fixed features. Redirects, error pages and
	// resources come on top.
	PagesPerHost int
	// MinPageBytes and MaxPageBytes bound the size of HTML pages; zero
	// means 20<<10 and 60<<10. MinPageBytes must leave room for MaxLinks
	// links (Validate says how much is needed).
	MinPageBytes, MaxPageBytes int
	// MinLinks and MaxLinks bound the link elements per HTML page,
	// mailto: and javascript: links included; zero means 40 and 80.
	// MinLinks must be at least 10.
	MinLinks, MaxLinks int
	// CrossHostFraction is the fraction of random links that point to
	// another host; zero means 0.1, negative means none (and no cross-host
	// redirect either).
	CrossHostFraction float64
	// MaxLatency bounds the deterministic extra latency of each ordinary
	// host, applied before every answer; zero means none.
	MaxLatency time.Duration
	// CrawlDelay is the Crawl-delay of the RobotsCrawlDelay hosts; zero
	// means 200ms.
	CrawlDelay time.Duration
	// RobotsKinds is assigned cyclically to the ordinary hosts by index;
	// nil or empty means DefaultRobotsKinds().
	RobotsKinds []RobotsKind
	// LivePages is the number of pages (/live/0, /live/1, ...) of each
	// ordinary host that change while the web runs, each with a mean
	// change interval taken in turn from LiveIntervals, host after host
	// (live page k of host h takes interval h×LivePages+k, modulo its
	// length; 0: never; nil means 1s, 10s, 100s and never). Zero means
	// none.
	LivePages     int
	LiveIntervals []time.Duration
	// NoSitemap makes every ordinary host answer /sitemap.xml 404, as
	// most sites do: a crawler must not keep asking for it.
	NoSitemap bool
	// Hostile also starts every hostile and trap host, one per kind of
	// HostileKindsAll (the Hostile... and Trap... constants say what each
	// does).
	Hostile bool
	// HostileKinds, when not empty, starts just the hostile and trap hosts
	// it names (each at most once), whether or not Hostile is set, so that
	// a test pays only for the hosts it judges. They still follow the
	// ordinary hosts in the order of HostileKindsAll, whatever the order
	// here. The script hosts (ScriptApp, ScriptNone) start only when
	// named here, after all the others.
	HostileKinds []string
	// ScriptProbe, when set, is an authority (host:port) that ScriptApp's
	// "/" tries to reach by fetch(), an image and a WebSocket: a test's
	// forbidden server, which a crawler's browser must never reach.
	ScriptProbe string
	// HangLimit is the longest a hanging handler (robots.txt timeout, the
	// silent, hang and drip hosts) holds a request; zero means 2 minutes.
	// Close releases them at once.
	HangLimit time.Duration
	// DripInterval is the pause between the single bytes the drip-headers
	// and drip-body hosts send; zero means 2 seconds.
	DripInterval time.Duration
	// LingerFor is how long the linger host's handler goes on after its
	// client has gone; zero means 3 seconds.
	LingerFor time.Duration
	// Domain is the parent domain of the host names; zero means "weft.test".
	// Ordinary hosts are h000.<Domain>, h001.<Domain>, ...; hostile and
	// trap hosts are <kind>.<Domain>: gzip-bomb.<Domain>, ...,
	// calendar.<Domain>.
	Domain string
	// IPPrefix is the first three octets, with the final dot, of the host
	// addresses; zero means "127.0.1.". Host k (ordinary hosts first, then
	// hostile ones) listens on IPPrefix+(k+1) for k < 254; further hosts
	// continue in the next third octet (127.0.2.1, ...), up to x.x.255.254.
	IPPrefix string
	// World is the shape of the web; "" means WorldClassic. Of the other
	// fields, WorldSeeds reads Seed, Hosts, PagesPerHost (zero there means
	// 1000), the page size and link bounds (zero there means 80 and 120
	// links), CrossHostFraction (only whether it is negative: then no
	// story links another host's home page), MaxLatency, CrawlDelay,
	// RobotsKinds, the hostile hosts, Domain, IPPrefix, IPAuthorities and
	// RawAmpersands; it has no live pages and no sitemap. WorldShop,
	// WorldOrder, WorldBlog and WorldHeavy say what they read.
	World World
	// BlogPlainLinks makes WorldBlog link its posts and archives as
	// WordPress's default ("plain") permalinks do: every URL is "/" and a
	// query (/?p=12, /?m=202611, /?page=2).
	BlogPlainLinks bool
	// IPAuthorities makes every host's authority its listener's address
	// ("127.0.1.4:41234") instead of its name, so that a client that
	// cannot be given Resolve (wget2, say) reaches every host; the names
	// stay in titles and Resolve.
	IPAuthorities bool
	// RawAmpersands makes WorldSeeds write the "&" of its link queries as
	// is, not as "&amp;": common on the web and read alike by HTML
	// parsers, and the only form wget2 (1.99) reads, as it does not decode
	// character references in URLs.
	RawAmpersands bool
	// Prerendered renders every page of a WorldHeavy web once, as Start
	// returns, and serves the copies: a web of static files, whose server
	// spends no CPU making pages (issue 37's "pre-rendered copy"), in
	// memory: about 400 MB for weft bench's 10,000 pages. Other worlds
	// ignore it.
	Prerendered bool
	// Network, when set, opens the hosts' listeners in place of the
	// loopback interface, at the same addresses: an in-memory network
	// (package memnet), for tests that run on fake time.
	Network Network
	// Encoding, when set, is the content coding (one of Encodings) in
	// which every host sends every body it writes whole (pages,
	// robots.txt, sitemaps, error pages), whatever the request's
	// Accept-Encoding: a server that answers only in brotli or zstd, as
	// some do for clients they take for browsers. The request log counts
	// the bytes sent. The bodies hostile hosts stream or write raw are
	// sent as they are.
	Encoding string
}

// Network opens listeners; package memnet's is one.
type Network interface {
	Listen(network, address string) (net.Listener, error)
}

// withDefaults returns c with zero fields replaced by their defaults.
func (c Config) withDefaults() Config {
	setInt := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	setInt(&c.Hosts, 100)
	if c.World == WorldOrder {
		setInt(&c.PagesPerHost, 500)
		setInt(&c.MinPageBytes, 6<<10)
		setInt(&c.MaxPageBytes, 16<<10)
		if c.CrossHostFraction == 0 {
			c.CrossHostFraction = 0.3
		}
		c.RobotsKinds = []RobotsKind{RobotsNone}
	}
	if c.World == WorldHeavy {
		setInt(&c.PagesPerHost, 200)
		if c.CrossHostFraction == 0 {
			c.CrossHostFraction = 0.3
		}
	}
	if c.World == WorldSeeds {
		setInt(&c.PagesPerHost, 1000)
		setInt(&c.MinLinks, 80)
		setInt(&c.MaxLinks, 120)
	}
	setInt(&c.PagesPerHost, 30)
	setInt(&c.MinPageBytes, 20<<10)
	setInt(&c.MaxPageBytes, 60<<10)
	setInt(&c.MinLinks, 40)
	setInt(&c.MaxLinks, 80)
	if c.CrossHostFraction == 0 {
		c.CrossHostFraction = 0.1
	}
	if c.CrawlDelay == 0 {
		c.CrawlDelay = 200 * time.Millisecond
	}
	if len(c.RobotsKinds) == 0 {
		c.RobotsKinds = DefaultRobotsKinds()
	}
	if c.HangLimit == 0 {
		c.HangLimit = 2 * time.Minute
	}
	if c.DripInterval == 0 {
		c.DripInterval = 2 * time.Second
	}
	if c.LingerFor == 0 {
		c.LingerFor = 3 * time.Second
	}
	if c.Domain == "" {
		c.Domain = "weft.test"
	}
	if c.IPPrefix == "" {
		c.IPPrefix = "127.0.1."
	}
	if c.LivePages > 0 && len(c.LiveIntervals) == 0 {
		c.LiveIntervals = []time.Duration{time.Second, 10 * time.Second, 100 * time.Second, 0}
	}
	return c
}

// Validate reports the first invalid field of c, after defaults are applied.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.World != "" && c.World != WorldClassic && c.World != WorldSeeds && c.World != WorldShop && c.World != WorldOrder && c.World != WorldBlog && c.World != WorldHeavy:
		return fmt.Errorf("synthweb: World %q is not %q, %q, %q, %q, %q or %q", c.World, WorldClassic, WorldSeeds, WorldShop, WorldOrder, WorldBlog, WorldHeavy)
	case c.World == WorldSeeds && c.MinLinks < chromeLinks:
		return fmt.Errorf("synthweb: MinLinks %d is below %d, the links every page of world %q carries", c.MinLinks, chromeLinks, WorldSeeds)
	case c.World == WorldHeavy && c.MinLinks < heavyChrome+heavyFanout:
		return fmt.Errorf("synthweb: MinLinks %d is below %d, the links every page of world %q carries", c.MinLinks, heavyChrome+heavyFanout, WorldHeavy)
	case c.Hosts < 0:
		return fmt.Errorf("synthweb: Hosts %d is negative", c.Hosts)
	case c.PagesPerHost < 0:
		return fmt.Errorf("synthweb: PagesPerHost %d is negative", c.PagesPerHost)
	case c.PagesPerHost > 1_000_000:
		return fmt.Errorf("synthweb: PagesPerHost %d exceeds 1000000", c.PagesPerHost)
	case c.MinLinks < 10:
		return fmt.Errorf("synthweb: MinLinks %d is below 10, too few to carry every page's required links", c.MinLinks)
	case c.MaxLinks < c.MinLinks:
		return fmt.Errorf("synthweb: MaxLinks %d is below MinLinks %d", c.MaxLinks, c.MinLinks)
	case c.MaxPageBytes < c.MinPageBytes:
		return fmt.Errorf("synthweb: MaxPageBytes %d is below MinPageBytes %d", c.MaxPageBytes, c.MinPageBytes)
	case math.IsNaN(c.CrossHostFraction) || c.CrossHostFraction > 1:
		return fmt.Errorf("synthweb: CrossHostFraction %v is not at most 1", c.CrossHostFraction)
	case c.MaxLatency < 0:
		return fmt.Errorf("synthweb: MaxLatency %v is negative", c.MaxLatency)
	case c.CrawlDelay < 0:
		return fmt.Errorf("synthweb: CrawlDelay %v is negative", c.CrawlDelay)
	case c.HangLimit < 0:
		return fmt.Errorf("synthweb: HangLimit %v is negative", c.HangLimit)
	case c.DripInterval < 0:
		return fmt.Errorf("synthweb: DripInterval %v is negative", c.DripInterval)
	case c.LingerFor < 0:
		return fmt.Errorf("synthweb: LingerFor %v is negative", c.LingerFor)
	}
	seen := make(map[string]bool, len(c.HostileKinds))
	for i, k := range c.HostileKinds {
		if _, ok := hostileKindIndex(k); !ok {
			return fmt.Errorf("synthweb: HostileKinds[%d] %q is not a hostile or trap kind (see HostileKindsAll)", i, k)
		}
		if seen[k] {
			return fmt.Errorf("synthweb: HostileKinds[%d] %q is named twice", i, k)
		}
		seen[k] = true
	}
	if need := c.minPageBytes(); (c.World == "" || c.World == WorldClassic) && c.MinPageBytes < need {
		return fmt.Errorf("synthweb: MinPageBytes %d is below %d, the room MaxLinks %d links need", c.MinPageBytes, need, c.MaxLinks)
	}
	for i, k := range c.RobotsKinds {
		if k < 0 || k >= numRobotsKinds {
			return fmt.Errorf("synthweb: RobotsKinds[%d] %d is not a RobotsKind", i, int(k))
		}
	}
	if c.Encoding != "" && !slices.Contains(Encodings, c.Encoding) {
		return fmt.Errorf("synthweb: Encoding %q is not one of %q", c.Encoding, Encodings)
	}
	if !validDomain(c.Domain) {
		return fmt.Errorf("synthweb: Domain %q is not a lowercase DNS name", c.Domain)
	}
	if _, err := c.ip(c.totalHosts() - 1); err != nil {
		return err
	}
	return nil
}

// minPageBytes is the smallest MinPageBytes that fits the page head and
// MaxLinks links in their compact form (see renderPage).
func (c Config) minPageBytes() int {
	return 512 + 2*c.maxNameLen() + c.MaxLinks*compactWorst(c)
}

func (c Config) totalHosts() int { return c.Hosts + len(c.startedKinds()) }

// startedKinds returns the kinds of the hostile and trap hosts to start, in
// the order of HostileKindsAll; c must be valid.
func (c Config) startedKinds() []string {
	if len(c.HostileKinds) == 0 {
		if c.Hostile {
			return HostileKindsAll()
		}
		return nil
	}

	var out []string
	for _, k := range append(HostileKindsAll(), optInKinds[:]...) {
		if slices.Contains(c.HostileKinds, k) {
			out = append(out, k)
		}
	}
	return out
}

// maxNameLen bounds the length of ordinary host names (the only link targets).
func (c Config) maxNameLen() int {
	return len("h") + max(3, digits(c.Hosts-1)) + 1 + len(c.Domain)
}

// maxPathLen bounds the HTML-escaped canonical path+query of any page; the
// longest family is "/list?cat=N&amp;page=P&amp;sort=desc".
func (c Config) maxPathLen() int {
	return max(35+digits(max(minPages, c.PagesPerHost*3/2)), len("/only/header-nofollow.html"))
}

func digits(n int) int { return len(strconv.Itoa(max(n, 0))) }

func validDomain(d string) bool {
	if d == "" || len(d) > 200 {
		return false
	}
	for label := range strings.SplitSeq(d, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if b := label[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-') {
				return false
			}
		}
	}
	return true
}

// ip returns the address of host k (ordinary hosts first).
func (c Config) ip(k int) (string, error) {
	bad := fmt.Errorf("synthweb: IPPrefix %q is not of the form \"127.B.C.\"", c.IPPrefix)
	parts := strings.Split(c.IPPrefix, ".")
	if len(parts) != 4 || parts[0] != "127" || parts[3] != "" {
		return "", bad
	}
	var oct [2]int
	for i, s := range parts[1:3] {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 || v > 255 || s != strconv.Itoa(v) {
			return "", bad
		}
		oct[i] = v
	}
	third := oct[1] + k/254
	if third > 255 {
		return "", fmt.Errorf("synthweb: %d hosts do not fit after IPPrefix %q", k+1, c.IPPrefix)
	}
	return fmt.Sprintf("127.%d.%d.%d", oct[0], third, k%254+1), nil
}

// baseDirList holds the directories that <base href> points to; "/x/y/"
// has no pages, so relative links resolved without the base go nowhere.
const baseDirList = "/ /a/b/ /a/c/d/ /a/e/ /docs/ /p/ /x/y/"

// Web is a running synthetic web. Its methods are safe for concurrent use.
type Web struct {
	cfg          Config
	hosts        []*host // ordinary hosts, then hostile ones
	nOrdinary    int
	byAuthority  map[string]int
	text         *textTable
	baseDirs     []string
	compactWorst int
	bombMember   []byte
	endlessChunk []byte
	hostileData                // the big bodies of the other hostile hosts started
	sessionSeq   atomic.Uint64 // session ids handed out by the sessions trap

	enc      *encoder  // Config.Encoding's; nil if none
	planPool sync.Pool // *pagePlan
	bufPool  sync.Pool // *[]byte

	seeds     *seedsWorld // nil unless Config.World is WorldSeeds
	order     *orderWorld // nil unless Config.World is WorldOrder
	heavy     *heavyWorld // nil unless Config.World is WorldHeavy
	seedsBufs sync.Pool   // *seedsBuf
	heavyBufs sync.Pool   // *heavyBuf

	log     requestLog
	started time.Time // live pages change from here

	closing   chan struct{} // closed by Close: releases waits, hangs and streams
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
	errMu     sync.Mutex
	serveErrs []error

	// Connections taken over from net/http (see hijack), which
	// http.Server.Close no longer knows about: Close closes them itself.
	connMu      sync.Mutex
	conns       map[net.Conn]struct{}
	connsClosed bool
}

// host is one synthetic host; everything but the listener and server is
// immutable once Start returns.
type host struct {
	idx            int
	name           string
	authority      string
	upperAuthority string
	addr           string
	latency        time.Duration
	hostile        string

	robots      RobotsKind
	robotsTxt   []byte
	rules       []rule // the rules that apply to ProductToken
	disallowAll bool   // robots.txt unreachable: everything is disallowed
	crawlDelay  time.Duration

	pages    []page
	byPath   map[string]int32
	linkable []int32
	image    int32        // page index of the image articles show; -1 if none
	live     []*liveClock // of the live pages, by their number

	ln     net.Listener
	srv    *http.Server
	silent *silentServer
	flaky  atomic.Int64 // FailFlaky's requests, to fail every other one
}

// HostInfo describes one host.
type HostInfo struct {
	Name       string        // "h003.weft.test"
	Authority  string        // "h003.weft.test:41234", as it appears in URLs
	Addr       string        // "127.0.1.4:41234"
	Robots     RobotsKind    // hostile and trap hosts: RobotsNotFound, but RobotsTimeout for silent, RobotsLarge for huge-robots (its own file)
	CrawlDelay time.Duration // 0 unless robots.txt declares one for ProductToken
	Latency    time.Duration
	Hostile    string // "" for ordinary hosts, else the kind: one of HostileKindsAll
}

// Start builds the web described by cfg and starts a listener and server
// per host. Close must be called to release them.
func Start(cfg Config) (*Web, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &Web{
		started:     time.Now(),
		cfg:         cfg,
		nOrdinary:   cfg.Hosts,
		byAuthority: make(map[string]int, cfg.totalHosts()),
		text:        newTextTable(cfg.Seed),
		baseDirs:    strings.Fields(baseDirList),
		closing:     make(chan struct{}),
		conns:       make(map[net.Conn]struct{}),
	}
	w.compactWorst = compactWorst(w.cfg)
	if cfg.Encoding != "" {
		enc, err := newEncoder(cfg.Encoding)
		if err != nil {
			return nil, err
		}
		w.enc = enc
	}
	w.planPool.New = func() any { return new(pagePlan) }
	w.bufPool.New = func() any { b := make([]byte, 0, cfg.MaxPageBytes+512); return &b }

	if err := w.listen(); err != nil {
		for _, h := range w.hosts {
			h.ln.Close()
		}
		return nil, err
	}
	if cfg.World == WorldShop || cfg.World == WorldBlog {
		// Nothing to build: a shop's or a blog's pages are made from their numbers.
	} else if cfg.World == WorldOrder {
		w.buildOrder()
	} else if cfg.World == WorldHeavy {
		w.buildHeavy()
		w.heavyBufs.New = func() any { return &heavyBuf{body: make([]byte, 0, cfg.MaxPageBytes+8<<10)} }
	} else if cfg.World == WorldSeeds {
		w.buildSeeds()
		w.seedsBufs.New = func() any { return &seedsBuf{body: make([]byte, 0, cfg.MaxPageBytes+8<<10)} }
	} else {
		for _, h := range w.hosts[:w.nOrdinary] {
			w.buildPages(h)
		}
		for _, h := range w.hosts[:w.nOrdinary] {
			w.buildGraph(h)
		}
		w.computeReachable()
	}
	for _, h := range w.hosts[w.nOrdinary:] {
		if err := w.prepareHostile(h.hostile); err != nil {
			for _, h := range w.hosts {
				h.ln.Close()
			}
			return nil, err
		}
	}
	if cfg.Prerendered && w.heavy != nil {
		w.prerenderHeavy()
	}
	w.serveAll()
	return w, nil
}

// listen opens every host's listener and fills in the host identities,
// which need the port numbers.
func (w *Web) listen() error {
	cfg := &w.cfg
	kinds := cfg.RobotsKinds
	hostile := cfg.startedKinds()
	for k := range cfg.Hosts + len(hostile) {
		h := &host{idx: k, image: -1}
		if k < cfg.Hosts {
			h.name = fmt.Sprintf("h%03d.%s", k, cfg.Domain)
			h.robots = kinds[k%len(kinds)]
			r := newRNG(cfg.Seed, streamLatency, uint64(k), 0)
			h.latency = time.Duration(r.float() * float64(cfg.MaxLatency))
		} else {
			h.hostile = hostile[k-cfg.Hosts]
			h.name = h.hostile + "." + cfg.Domain
			h.robots = RobotsNotFound
			switch {
			case h.hostile == HostileSilent:
				h.robots = RobotsTimeout
			case h.hostile == HostileHugeRobots:
				h.robots = RobotsLarge
			case isFailing(h.hostile):
				h.robots = failingRobots(h.hostile)
			}
		}
		ip, err := cfg.ip(k)
		if err != nil {
			return err
		}
		listen := net.Listen
		if cfg.Network != nil {
			listen = cfg.Network.Listen
		}
		ln, err := listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return fmt.Errorf("synthweb: listen for %s on %s: %w", h.name, ip, err)
		}
		h.ln = ln
		w.hosts = append(w.hosts, h)
		h.addr = ln.Addr().String()
		h.authority = h.name + ":" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		if cfg.IPAuthorities {
			h.authority = h.addr
		}
		h.upperAuthority = strings.ToUpper(h.authority)
		w.byAuthority[h.authority] = k
		if f := robotsFileFor(h.robots, h.authority, cfg.CrawlDelay); f != nil && h.hostile == "" {
			h.robotsTxt = f.render(h.name)
			h.rules, h.crawlDelay = f.forAgent(ProductToken)
		}
		h.disallowAll = h.robots == RobotsServerError || h.robots == RobotsTimeout
	}
	return nil
}

// serveAll starts a server per host. Every goroutine it starts, and every
// connection goroutine of net/http (through ConnState), is counted in w.wg
// so that Close can wait for all of them.
func (w *Web) serveAll() {
	discard := log.New(io.Discard, "", 0)
	for _, h := range w.hosts {
		if h.hostile == HostileSilent {
			h.silent = &silentServer{w: w, h: h, ln: h.ln, conns: make(map[net.Conn]struct{})}
			w.wg.Add(1)
			go h.silent.run()
			continue
		}
		h.srv = &http.Server{
			Handler:  hostHandler{w: w, h: h},
			ErrorLog: discard,
			// StateNew runs on the Serve goroutine, whose own count keeps
			// w.wg above zero, so these Adds never race with Wait.
			ConnState: func(_ net.Conn, s http.ConnState) {
				switch s {
				case http.StateNew:
					w.wg.Add(1)
				case http.StateClosed, http.StateHijacked:
					w.wg.Done()
				}
			},
		}
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			if err := h.srv.Serve(h.ln); !errors.Is(err, http.ErrServerClosed) {
				w.errMu.Lock()
				w.serveErrs = append(w.serveErrs, fmt.Errorf("synthweb: serve %s: %w", h.name, err))
				w.errMu.Unlock()
			}
		}()
	}
}

// Close stops every server, releases hanging and streaming handlers,
// closes the connections hijacked from net/http and waits until all
// goroutines of the web have exited. It is idempotent.
func (w *Web) Close() error {
	w.closeOnce.Do(func() {
		close(w.closing)
		var errs []error
		for _, h := range w.hosts {
			var err error
			if h.silent != nil {
				err = h.silent.close()
			} else {
				err = h.srv.Close()
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("synthweb: close %s: %w", h.name, err))
			}
		}
		w.closeConns()
		w.wg.Wait()
		w.errMu.Lock()
		errs = append(errs, w.serveErrs...)
		w.errMu.Unlock()
		w.closeErr = errors.Join(errs...)
	})
	return w.closeErr
}

// Seeds returns the home page URL of every ordinary host.
func (w *Web) Seeds() []string {
	out := make([]string, 0, w.nOrdinary)
	for _, h := range w.hosts[:w.nOrdinary] {
		out = append(out, "http://"+h.authority+"/")
	}
	return out
}

// HostileSeeds returns the home page URL of every hostile and trap host
// started (none unless Config.Hostile or Config.HostileKinds), in the order
// of Hosts.
func (w *Web) HostileSeeds() []string {
	var out []string
	for _, h := range w.hosts[w.nOrdinary:] {
		out = append(out, "http://"+h.authority+"/")
	}
	return out
}

// Resolve maps every host name to its IP literal, for the crawler's
// --resolve flag; in WorldHeavy, the "www." names of the ordinary hosts
// too.
func (w *Web) Resolve() map[string]string {
	out := make(map[string]string, len(w.hosts))
	for i, h := range w.hosts {
		ip, _, _ := net.SplitHostPort(h.addr)
		out[h.name] = ip
		if w.heavy != nil && i < w.nOrdinary {
			out["www."+h.name] = ip
		}
	}
	return out
}

// Hosts describes every host, ordinary ones first.
func (w *Web) Hosts() []HostInfo {
	out := make([]HostInfo, 0, len(w.hosts))
	for _, h := range w.hosts {
		out = append(out, HostInfo{
			Name:       h.name,
			Authority:  h.authority,
			Addr:       h.addr,
			Robots:     h.robots,
			CrawlDelay: h.crawlDelay,
			Latency:    h.latency,
			Hostile:    h.hostile,
		})
	}
	return out
}

// serve answers one request of host h; hostHandler has logged it.
func (w *Web) serve(rw *logWriter, r *http.Request, h *host) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		rw.Header().Set("Allow", "GET, HEAD")
		writeBody(rw, r, http.StatusMethodNotAllowed, "text/plain; charset=utf-8", "method not allowed\n")
		return
	}
	if h.hostile != "" {
		w.serveHostile(rw, r, h)
		return
	}
	if !w.pause(r.Context(), h.latency) {
		abort()
	}
	path := r.URL.Path
	if w.serveRobots(rw, r, h, path) {
		return
	}
	if w.seeds != nil {
		w.serveSeeds(rw, r, h)
		return
	}
	if w.heavy != nil {
		w.serveHeavy(rw, r, h)
		return
	}
	if w.cfg.World == WorldShop {
		w.serveShop(rw, r, h)
		return
	}
	if w.order != nil {
		if path == sitemapPath {
			writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
			return
		}
		w.serveOrder(rw, r, h)
		return
	}
	if w.cfg.World == WorldBlog {
		w.serveBlog(rw, r, h)
		return
	}
	if path == sitemapPath && !w.cfg.NoSitemap {
		writeBody(rw, r, http.StatusOK, "application/xml", w.sitemap(h))
		return
	}
	// Pages are keyed by their %-encoded paths, as their links spell them.
	p, ok := h.byPath[canonicalPath(r.URL.EscapedPath(), r.URL.RawQuery)]
	if !ok {
		writeBody(rw, r, http.StatusNotFound, "text/html; charset=utf-8", notFoundBody)
		return
	}
	pg := &h.pages[p]
	switch {
	case pg.role == roleRedirect:
		loc := w.url(pg.redirect)
		if int(pg.redirect.h) == h.idx && p%2 == 0 {
			loc = w.hosts[pg.redirect.h].pages[pg.redirect.p].path // host-relative Location
		}
		redirect(rw, loc, pg.status)
	case pg.role == roleLive:
		w.serveLive(rw, r, h, p)
	case pg.role.isHTML():
		pl := w.planPool.Get().(*pagePlan)
		bp := w.bufPool.Get().(*[]byte)
		w.plan(h, p, pl)
		b := w.renderPage((*bp)[:0], h, p, pl)
		if pg.role == roleHeaderNoFollow {
			rw.Header().Set("X-Robots-Tag", "nofollow")
		}
		writeBody(rw, r, http.StatusOK, contentType(pg.role), b)
		*bp = b[:0]
		w.bufPool.Put(bp)
		w.planPool.Put(pl)
	default:
		writeBody(rw, r, pg.status, contentType(pg.role), staticBody(pg.role))
	}
}

// pause waits d unless the client leaves or the web closes first; it
// reports whether the full wait elapsed.
func (w *Web) pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-w.closing:
		return false
	}
}

// hang holds a request without answering until HangLimit passes, the client
// leaves or the web closes, then drops the connection without a response:
// a server that never answered, not one that answered late.
func (w *Web) hang(ctx context.Context) {
	w.pause(ctx, w.cfg.HangLimit)
	abort()
}

// abort ends the handler and closes the connection without writing a
// response; net/http recovers this panic value silently, and hostHandler's
// deferred log entry still records the request (with status 0).
func abort() { panic(http.ErrAbortHandler) }

func writeBody[B string | []byte](rw *logWriter, r *http.Request, status int, ctype string, body B) {
	hdr := rw.Header()
	if ctype != "" {
		hdr.Set("Content-Type", ctype)
	}
	if rw.enc != nil && len(body) > 0 {
		enc := rw.enc.encode([]byte(body))
		hdr.Set("Content-Encoding", rw.enc.coding)
		hdr.Set("Vary", "Accept-Encoding")
		hdr.Set("Content-Length", strconv.Itoa(len(enc)))
		rw.WriteHeader(status)
		if r.Method != http.MethodHead {
			_, _ = rw.Write(enc)
		}
		return
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(status)
	if r.Method != http.MethodHead && len(body) > 0 {
		_, _ = rw.Write([]byte(body)) // a write error means the client left; nothing to do
	}
}

func redirect(rw *logWriter, location string, status int) {
	rw.Header().Set("Location", location)
	rw.Header().Set("Content-Length", "0")
	rw.WriteHeader(status)
}
