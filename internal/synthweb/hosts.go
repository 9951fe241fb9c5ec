package synthweb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// streamHosts draws everything of a HostsWeb, apart from the streams of
// rand.go so that the other worlds never shift.
const streamHosts uint64 = 1 << 16

// HostsDomain is the parent domain of every host of a HostsWeb: host i is
// named "h<i>.bench.test" (i in decimal, no leading zeros).
const HostsDomain = "bench.test"

// HostsStatsHost is the Host header that asks a HostsWeb for its counters
// (GET /stats, answered as a HostsSummary in JSON). It is outside
// HostsDomain, so no crawl of the web can reach it through a link.
const HostsStatsHost = "synthweb.stats"

// HostsConfig describes a web of many small hosts served by name on a few
// loopback listeners. The zero value is a valid web of a million hosts.
type HostsConfig struct {
	// Seed determines everything but the port number.
	Seed int64
	// Hosts is the number of hosts; zero means 1,000,000.
	Hosts int
	// Listeners is the number of listening addresses, 127.0.0.1 up to
	// 127.0.0.<Listeners>, all on one port; host i is served on listener
	// i mod Listeners. Zero means 4, at most 250.
	Listeners int
	// Hubs is the number of hosts whose home pages are the seeds (hosts 0
	// to Hubs-1); zero means 4.
	Hubs int
}

func (c HostsConfig) withDefaults() HostsConfig {
	if c.Hosts == 0 {
		c.Hosts = 1_000_000
	}
	if c.Listeners == 0 {
		c.Listeners = 4
	}
	if c.Hubs == 0 {
		c.Hubs = 4
	}
	return c
}

// Validate names the first field out of range.
func (c HostsConfig) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Hosts < 1 || c.Hosts > 100_000_000:
		return fmt.Errorf("synthweb: HostsConfig.Hosts %d: want 1 to 100,000,000", c.Hosts)
	case c.Listeners < 1 || c.Listeners > 250:
		return fmt.Errorf("synthweb: HostsConfig.Listeners %d: want 1 to 250", c.Listeners)
	case c.Hubs < 1 || c.Hubs > c.Hosts:
		return fmt.Errorf("synthweb: HostsConfig.Hubs %d: want 1 to Hosts (%d)", c.Hubs, c.Hosts)
	}
	return nil
}

// The shape of a HostsWeb's hosts.
const (
	hostsMinPages    = 2
	hostsMaxPages    = 5
	hostsChildren    = 4 // tree links from a home page: hosts 4i+1 to 4i+4
	hostsRandomLinks = 2 // links per page to random pages of hosts already reachable
	hostsMinRules    = 50
	hostsMaxRules    = 100
	// Words of text per page, drawn one by one: copies of passages of
	// the shared text block, as the other worlds make, would overlap
	// between two of a million pages often enough to make near-duplicates.
	hostsMinWords = 250
	hostsMaxWords = 450
)

// hostsDisallowed are path prefixes that the "*" group of every host's
// robots.txt disallows, and that its pages link to: a request for one of
// them is a robots.txt violation.
var hostsDisallowed = []string{"/private/", "/search"}

// HostsWeb serves HostsConfig's web. Its memory is a few counters per
// host (12 bytes) and the shared text table: pages and robots.txt files
// are generated for each request from (Seed, host, page), and there is no
// request log, only counts.
type HostsWeb struct {
	cfg     HostsConfig
	text    *textTable
	port    int
	addrs   []netip.Addr
	lns     []net.Listener
	servers []*http.Server
	wg      sync.WaitGroup
	total   int64 // pages in the web

	robots   []atomic.Uint32 // robots.txt requests, per host
	served   []atomic.Uint32 // bit p: page p answered at least once, per host
	inFlight []atomic.Int32  // requests being answered, per host

	requests, robotsReqs, pages, repeats, disallowed, other atomic.Int64
	hostsRobots, hostsVisited, hostsComplete, overlaps      atomic.Int64
}

// HostsSummary is what a HostsWeb has served. Every count comes from the
// server's side of the connections.
type HostsSummary struct {
	Hosts         int   `json:"hosts"`          // hosts in the web
	PagesInWeb    int64 `json:"pages_in_web"`   // pages in the web (robots.txt not counted)
	Requests      int64 `json:"requests"`       // every request to a host of the web
	Robots        int64 `json:"robots"`         // robots.txt requests
	Pages         int64 `json:"pages"`          // page requests answered 200
	Repeats       int64 `json:"repeats"`        // of which for a page already answered
	Disallowed    int64 `json:"disallowed"`     // requests for a path every host's robots.txt disallows
	Other         int64 `json:"other"`          // anything else (answered 404: /sitemap.xml probes, unknown paths or hosts)
	HostsRobots   int64 `json:"hosts_robots"`   // hosts whose robots.txt was asked for
	HostsVisited  int64 `json:"hosts_visited"`  // hosts with at least one page answered
	HostsComplete int64 `json:"hosts_complete"` // hosts with every page answered
	// Overlaps counts requests that arrived while another request to the
	// same host was being answered: a breach of one request in flight per
	// host.
	Overlaps int64 `json:"overlaps"`
}

// StartHosts listens on 127.0.0.1 to 127.0.0.<Listeners>, all on one
// free port, and serves the web until Close.
func StartHosts(cfg HostsConfig) (*HostsWeb, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	w := &HostsWeb{
		cfg:      cfg,
		text:     newTextTable(cfg.Seed),
		robots:   make([]atomic.Uint32, cfg.Hosts),
		served:   make([]atomic.Uint32, cfg.Hosts),
		inFlight: make([]atomic.Int32, cfg.Hosts),
	}
	for i := range cfg.Hosts {
		w.total += int64(w.pageCount(i))
	}
	if err := w.listen(); err != nil {
		return nil, err
	}
	for _, ln := range w.lns {
		srv := &http.Server{
			Handler:           http.HandlerFunc(w.serveHTTP),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       30 * time.Second,
			ErrorLog:          log.New(io.Discard, "", 0),
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
		w.servers = append(w.servers, srv)
		w.wg.Go(func() { srv.Serve(ln) })
	}
	return w, nil
}

// listen binds every listener to one port: the resolver gives addresses
// only, so the port in the URLs must fit them all. Another process may hold
// the port on a later address; then it tries another.
func (w *HostsWeb) listen() error {
	var lastErr error
	for range 20 {
		first, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("synthweb: listen on 127.0.0.1: %w", err)
		}
		port := first.Addr().(*net.TCPAddr).Port
		lns := []net.Listener{first}
		addrs := []netip.Addr{netip.AddrFrom4([4]byte{127, 0, 0, 1})}
		for k := 2; k <= w.cfg.Listeners && lastErr == nil; k++ {
			a := netip.AddrFrom4([4]byte{127, 0, 0, byte(k)})
			ln, err := net.Listen("tcp", netip.AddrPortFrom(a, uint16(port)).String())
			if err != nil {
				lastErr = fmt.Errorf("synthweb: listen on %v port %d: %w", a, port, err)
				break
			}
			lns = append(lns, ln)
			addrs = append(addrs, a)
		}
		if len(lns) == w.cfg.Listeners {
			w.port, w.addrs, w.lns = port, addrs, lns
			return nil
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	return lastErr
}

// Close stops the listeners and waits for the servers to return.
func (w *HostsWeb) Close() error {
	var errs []error
	for _, srv := range w.servers {
		errs = append(errs, srv.Close())
	}
	w.wg.Wait()
	return errors.Join(errs...)
}

// Port is the port every listener is on.
func (w *HostsWeb) Port() int { return w.port }

// Addrs are the listeners' addresses; host i is on Addrs()[i mod len].
func (w *HostsWeb) Addrs() []netip.Addr { return w.addrs }

// Seeds are the home pages of the hub hosts.
func (w *HostsWeb) Seeds() []string {
	s := make([]string, w.cfg.Hubs)
	for i := range s {
		s[i] = w.pageURL(i, 0)
	}
	return s
}

// Resolver maps the web's host names to its listeners.
func (w *HostsWeb) Resolver() HostsResolver {
	return HostsResolver{Addrs: w.addrs, Hosts: w.cfg.Hosts}
}

// Summary reads the counters; for a finished crawl, call it once nothing
// is in flight.
func (w *HostsWeb) Summary() HostsSummary {
	return HostsSummary{
		Hosts: w.cfg.Hosts, PagesInWeb: w.total,
		Requests: w.requests.Load(), Robots: w.robotsReqs.Load(), Pages: w.pages.Load(), Repeats: w.repeats.Load(),
		Disallowed: w.disallowed.Load(), Other: w.other.Load(),
		HostsRobots: w.hostsRobots.Load(), HostsVisited: w.hostsVisited.Load(), HostsComplete: w.hostsComplete.Load(),
		Overlaps: w.overlaps.Load(),
	}
}

// HostsResolver resolves the host names of a HostsWeb without a table:
// the index in the name picks the listener. It satisfies fetch.Resolver.
type HostsResolver struct {
	Addrs []netip.Addr
	Hosts int
}

// LookupNetIP answers "h<i>.bench.test" for i below Hosts, and not found
// for every other name.
func (r HostsResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	i, ok := HostIndex(host)
	if !ok || i >= r.Hosts || len(r.Addrs) == 0 || network == "ip6" {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{r.Addrs[i%len(r.Addrs)]}, nil
}

// HostIndex returns i for the name "h<i>.bench.test" (case-insensitive,
// an optional trailing dot, i without leading zeros).
func HostIndex(name string) (int, bool) {
	name = strings.TrimSuffix(name, ".")
	label, ok := cutSuffixFold(name, "."+HostsDomain)
	if !ok || len(label) < 2 || (label[0] != 'h' && label[0] != 'H') {
		return 0, false
	}
	digits := label[1:]
	if len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i < 0 || digits[0] == '+' || digits[0] == '-' {
		return 0, false
	}
	return i, true
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) < len(suffix) || !strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s, false
	}
	return s[:len(s)-len(suffix)], true
}

// pageCount is the number of pages of host i: its home page and 1 to 4
// more.
func (w *HostsWeb) pageCount(i int) int {
	r := newRNG(w.cfg.Seed, streamHosts, uint64(i), 0)
	return r.between(hostsMinPages, hostsMaxPages)
}

func hostName(i int) string { return "h" + strconv.Itoa(i) + "." + HostsDomain }

func (w *HostsWeb) pageURL(i, p int) string {
	return "http://" + hostName(i) + ":" + strconv.Itoa(w.port) + pagePath(p)
}

func pagePath(p int) string {
	if p == 0 {
		return "/"
	}
	return "/p/" + strconv.Itoa(p) + ".html"
}

// pageIndex is the page a path names, or -1.
func pageIndex(path string) int {
	if path == "/" {
		return 0
	}
	s, ok := strings.CutPrefix(path, "/p/")
	if !ok {
		return -1
	}
	s, ok = strings.CutSuffix(s, ".html")
	if !ok || len(s) != 1 || s[0] < '1' || s[0] > '9' {
		return -1
	}
	return int(s[0] - '0')
}

func (w *HostsWeb) serveHTTP(rw http.ResponseWriter, r *http.Request) {
	name := r.Host
	if h, _, err := net.SplitHostPort(name); err == nil {
		name = h
	}
	if strings.EqualFold(name, HostsStatsHost) && r.URL.Path == "/stats" {
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(w.Summary())
		return
	}
	w.requests.Add(1)
	i, ok := HostIndex(name)
	if !ok || i >= w.cfg.Hosts {
		w.other.Add(1)
		http.NotFound(rw, r)
		return
	}
	if w.inFlight[i].Add(1) > 1 {
		w.overlaps.Add(1)
	}
	defer w.inFlight[i].Add(-1)
	path := r.URL.Path
	if path == robotsPath {
		w.robotsReqs.Add(1)
		if w.robots[i].Add(1) == 1 {
			w.hostsRobots.Add(1)
		}
		writePlain(rw, "text/plain; charset=utf-8", w.robotsTxt(nil, i))
		return
	}
	for _, d := range hostsDisallowed {
		if strings.HasPrefix(path, d) {
			w.disallowed.Add(1)
			http.NotFound(rw, r)
			return
		}
	}
	n := w.pageCount(i)
	p := pageIndex(path)
	if p < 0 || p >= n || r.URL.RawQuery != "" {
		w.other.Add(1)
		http.NotFound(rw, r)
		return
	}
	w.pages.Add(1)
	bit := uint32(1) << p
	if old := w.served[i].Or(bit); old&bit != 0 {
		w.repeats.Add(1)
	} else {
		if old == 0 {
			w.hostsVisited.Add(1)
		}
		if old|bit == uint32(1)<<n-1 {
			w.hostsComplete.Add(1)
		}
	}
	writePlain(rw, "text/html; charset=utf-8", w.page(nil, i, p, n))
}

func writePlain(rw http.ResponseWriter, ctype string, body []byte) {
	rw.Header().Set("Content-Type", ctype)
	rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
	rw.WriteHeader(http.StatusOK)
	rw.Write(body)
}

// page renders page p of host i (of n pages). It links to every page of
// its host, to two disallowed paths, to random pages of hosts 0 to 4i+4
// (mostly hosts a breadth-first crawl has met already), and, from the home
// page, to the home pages of its children in a 4-ary tree of hosts, which
// is what makes every host reachable from host 0 within log4(Hosts) hops.
func (w *HostsWeb) page(dst []byte, i, p, n int) []byte {
	r := newRNG(w.cfg.Seed, streamHosts, uint64(i), uint64(p)+1)
	dst = append(dst, "<!doctype html>\n<html><head><title>"...)
	dst = w.text.appendWords(dst, &r, 4)
	dst = append(dst, "</title></head>\n<body>\n<nav>"...)
	for q := range n {
		dst = append(dst, `<a href="`...)
		dst = append(dst, pagePath(q)...)
		dst = append(dst, `">page `...)
		dst = strconv.AppendInt(dst, int64(q), 10)
		dst = append(dst, "</a> "...)
	}
	dst = append(dst, `<a href="/private/`...)
	dst = strconv.AppendInt(dst, int64(p), 10)
	dst = append(dst, `.html">account</a> <a href="/search?q=`...)
	dst = w.text.appendWords(dst, &r, 1)
	dst = append(dst, "\">search</a></nav>\n<p>"...)
	dst = w.text.appendWords(dst, &r, r.between(hostsMinWords, hostsMaxWords))
	dst = append(dst, "</p>\n<ul>\n"...)
	link := func(h, q int) {
		dst = append(dst, `<li><a href="`...)
		dst = append(dst, w.pageURL(h, q)...)
		dst = append(dst, `">`...)
		dst = w.text.appendWords(dst, &r, 3)
		dst = append(dst, "</a></li>\n"...)
	}
	if p == 0 {
		for c := hostsChildren*i + 1; c <= hostsChildren*i+hostsChildren && c < w.cfg.Hosts; c++ {
			link(c, 0)
		}
	}
	reach := min(w.cfg.Hosts, hostsChildren*i+hostsChildren+1)
	for range hostsRandomLinks {
		h := r.intn(reach)
		link(h, r.intn(w.pageCount(h)))
	}
	return append(dst, "</ul>\n</body></html>\n"...)
}

// hostsPatterns are the shapes of the robots.txt rules beyond the fixed
// ones; %s is a word of the host's own choosing. None of them matches "/"
// or "/p/<n>.html", the host's pages.
var hostsPatterns = []string{
	"Disallow: /%s/",
	"Disallow: /%s/edit",
	"Disallow: /%s/*/print$",
	"Disallow: /*?%s=",
	"Disallow: /*&%s=",
	"Allow: /%s/public/",
	"Disallow: /%s/%s.php",
	"Disallow: /*.%s$",
	"Allow: /%s/*.css$",
	"Disallow: /tag/%s/feed/",
}

// robotsTxt renders host i's robots.txt: 50 to 100 rules in three groups,
// two bad bots shut out, a Googlebot group, and the "*" group that applies
// to the crawler, which disallows hostsDisallowed and the host's own
// paths.
func (w *HostsWeb) robotsTxt(dst []byte, i int) []byte {
	r := newRNG(w.cfg.Seed, streamHosts, uint64(i), 1<<20)
	rules := r.between(hostsMinRules, hostsMaxRules)
	word := func() string {
		for {
			s := w.text.words[r.intn(len(w.text.words))]
			if s[0] != 'p' { // "/p..." rules would come near the pages' paths; keep them clearly apart
				return s
			}
		}
	}
	dst = append(dst, "# robots.txt of "...)
	dst = append(dst, hostName(i)...)
	dst = append(dst, "\nUser-agent: BadBot\nUser-agent: EvilScraper\nDisallow: /\n\nUser-agent: Googlebot\n"...)
	rules--
	google := r.between(5, 10)
	for range google {
		dst = fmt.Appendf(dst, "Disallow: /%s/\n", word())
	}
	rules -= google
	dst = append(dst, "\nUser-agent: *\nDisallow: /private/\nAllow: /private/press/\nDisallow: /search\n"...)
	rules -= 3
	for ; rules > 0; rules-- {
		pat := hostsPatterns[r.intn(len(hostsPatterns))]
		if strings.Count(pat, "%s") == 2 {
			dst = fmt.Appendf(dst, pat+"\n", word(), word())
		} else {
			dst = fmt.Appendf(dst, pat+"\n", word())
		}
	}
	return dst
}
