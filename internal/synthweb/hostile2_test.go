package synthweb

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"go.uber.org/goleak"
	"golang.org/x/net/html"
)

// kindsConfig starts one ordinary host and the given hostile kinds, with
// short waits.
func kindsConfig(kinds ...string) Config {
	return Config{Seed: 7, Hosts: 1, PagesPerHost: 12, HostileKinds: kinds,
		HangLimit: 400 * time.Millisecond, DripInterval: 20 * time.Millisecond}
}

// rawRequest dials h and sends a GET for path, leaving the connection open.
func rawRequest(t *testing.T, h HostInfo, path string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", h.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: "+h.Authority+"\r\nUser-Agent: test\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// readFor reads from c until d has passed or the connection ends, and
// returns what came and the error that ended it (a timeout if d passed).
func readFor(c net.Conn, d time.Duration) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(d))
	var out []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

// wantNotFound checks that each path of base answers 404.
func wantNotFound(t *testing.T, c *http.Client, base string, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if r := get(t, c, base+p); r.status != 404 {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// anchorHrefs returns the href of every <a> start tag, as an HTML5
// tokenizer reads them (every href attribute, duplicates included).
func anchorHrefs(body []byte) []string {
	var out []string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			if string(name) != "a" {
				continue
			}
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				if string(k) == "href" {
					out = append(out, string(v))
				}
			}
		}
	}
}

// resolveAll resolves hrefs against page.
func resolveAll(t *testing.T, page string, hrefs []string) []string {
	t.Helper()
	base := mustParse(t, page)
	out := make([]string, 0, len(hrefs))
	for _, h := range hrefs {
		out = append(out, base.ResolveReference(mustParse(t, h)).String())
	}
	return out
}

// firstParagraph is the generated text of a small page.
func firstParagraph(b []byte) string {
	s := string(b)
	i := strings.Index(s, "<p>")
	j := strings.Index(s, "</p>")
	if i < 0 || j < i {
		return ""
	}
	return s[i+3 : j]
}

// overlap is the share of the words of a found in b.
func overlap(a, b string) float64 {
	words := map[string]bool{}
	for _, w := range strings.Fields(b) {
		words[w] = true
	}
	aw := strings.Fields(a)
	n := 0
	for _, w := range aw {
		if words[w] {
			n++
		}
	}
	return float64(n) / float64(max(len(aw), 1))
}

func TestHostileKindsSelection(t *testing.T) {
	t.Parallel()
	all := HostileKindsAll()
	if len(all) != 23 {
		t.Errorf("%d kinds, want 23", len(all))
	}
	seen := map[string]bool{}
	var traps []string
	for _, k := range all {
		if seen[k] || !validDomain(k) {
			t.Errorf("kind %q repeated or not a host name label", k)
		}
		seen[k] = true
		if IsTrap(k) {
			traps = append(traps, k)
		}
	}
	if !slices.Equal(traps, []string{TrapSessions, TrapFacets, TrapDeep, TrapCalendar}) || IsTrap(HostileCopies) || IsTrap("x") {
		t.Errorf("traps %v", traps)
	}

	// A subset starts in HostileKindsAll order after the ordinary hosts,
	// whatever the order asked, and Hostile adds nothing to it.
	w := startWeb(t, Config{Seed: 3, Hosts: 2, PagesPerHost: 12, Hostile: true,
		HostileKinds: []string{HostileHugeRobots, TrapCalendar, HostileSilent, HostileStorm429}})
	hosts := w.Hosts()
	want := []string{"", "", HostileSilent, HostileHugeRobots, HostileStorm429, TrapCalendar}
	if len(hosts) != len(want) || len(w.HostileSeeds()) != 4 {
		t.Fatalf("%d hosts, %d hostile seeds", len(hosts), len(w.HostileSeeds()))
	}
	for i, h := range hosts {
		ip, _, _ := net.SplitHostPort(h.Addr)
		if h.Hostile != want[i] || ip != "127.0.1."+strconv.Itoa(i+1) {
			t.Errorf("host %d: %+v, want kind %q at 127.0.1.%d", i, h, want[i], i+1)
		}
		if i >= 2 && w.HostileSeeds()[i-2] != "http://"+h.Authority+"/" {
			t.Errorf("hostile seed %d: %s", i-2, w.HostileSeeds()[i-2])
		}
	}
	for i, r := range []RobotsKind{RobotsTimeout, RobotsLarge, RobotsNotFound, RobotsNotFound} {
		if hosts[2+i].Robots != r {
			t.Errorf("%s: robots %v, want %v", hosts[2+i].Name, hosts[2+i].Robots, r)
		}
	}
	// The big bodies of the hosts not started are not built.
	if w.binaryBody != nil || w.manyLinks != nil || w.malformed != nil || w.bombMember != nil || w.hugeRobots == nil {
		t.Error("bodies built for hosts not started, or not for one started")
	}
}

func TestDripHeaders(t *testing.T) {
	t.Parallel()
	cfg := kindsConfig(HostileDripHeaders)
	cfg.DripInterval = 50 * time.Millisecond
	cfg.HangLimit = 3 * time.Second // far from the drip, so that the two never blur
	w := startWeb(t, cfg)
	h := hostileHost(t, w, HostileDripHeaders)
	c := newClient(t, w)
	if r := get(t, c, "http://"+h.Authority+"/robots.txt"); r.status != 404 {
		t.Errorf("robots.txt: %d", r.status)
	}

	// Bounds are rates, not counts in a window: a loaded machine may
	// let bytes pile up before the test reads them.
	start := time.Now()
	conn := rawRequest(t, h, "/")
	// The first byte may take a while on a loaded machine; then a few
	// more come, at the drip's rate.
	one := make([]byte, 1)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(conn, one); err != nil {
		t.Fatalf("no first byte: %v", err)
	}
	got, err := readFor(conn, 200*time.Millisecond)
	got = append(one, got...)
	if most := int(time.Since(start)/cfg.DripInterval) + 2; !isTimeout(err) || len(got) > most {
		t.Errorf("first bytes: %q, %v; want a few, at most %d", got, err, most)
	}
	rest, err := readFor(conn, 10*time.Second)
	got = append(got, rest...)
	d := time.Since(start)
	if err != io.EOF || d < cfg.HangLimit || d > cfg.HangLimit+5*time.Second {
		t.Errorf("ended after %v with %v, want EOF at HangLimit", d, err)
	}
	if g := string(got); !strings.HasPrefix(g, dripHeadersHead[:min(len(g), len(dripHeadersHead))]) || bytes.Contains(got, []byte("\r\n\r\n")) ||
		len(g) > len(dripHeadersHead) && !strings.HasPrefix(strings.Repeat(dripHeaderLine, len(g)), g[len(dripHeadersHead):]) {
		t.Errorf("sent %q", got)
	}
	r := waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && r.Path == "/" && !r.End.IsZero() })
	if r.Status != 0 || r.Bytes != 0 || r.End.Sub(r.Start) < cfg.HangLimit-50*time.Millisecond {
		t.Errorf("log: %+v", r)
	}

	// A client that gives up ends the drip at once.
	conn = rawRequest(t, h, "/")
	readFor(conn, 30*time.Millisecond)
	conn.Close()
	first := r
	r = waitLog(t, w, func(r Request) bool {
		return r.Addr == h.Addr && r.Path == "/" && !r.End.IsZero() && r.Start.After(first.Start)
	})
	if d := r.End.Sub(r.Start); d > cfg.HangLimit-time.Second {
		t.Errorf("drip went on %v after the client left", d)
	}

	// An HTTP client waits in vain for the headers.
	c.Transport.(*http.Transport).ResponseHeaderTimeout = 150 * time.Millisecond
	if resp, err := c.Get("http://" + h.Authority + "/"); err == nil {
		resp.Body.Close()
		t.Error("got a response")
	}
}

func TestDripBody(t *testing.T) {
	t.Parallel()
	cfg := kindsConfig(HostileDripBody)
	cfg.HangLimit = 4 * time.Second // far from the drip, so that the two never blur
	w := startWeb(t, cfg)
	h := hostileHost(t, w, HostileDripBody)
	c := newClient(t, w)
	start := time.Now()
	resp, err := c.Get("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second || resp.StatusCode != 200 || resp.ContentLength != DripBodyBytes || resp.Header.Get("Content-Type") != htmlUTF8 {
		t.Errorf("after %v: %d, length %d, %v", d, resp.StatusCode, resp.ContentLength, resp.Header)
	}
	timer := time.AfterFunc(150*time.Millisecond, func() { resp.Body.Close() })
	defer timer.Stop()
	n, _ := io.Copy(io.Discard, resp.Body)
	if most := int64(time.Since(start)/cfg.DripInterval) + 2; n == 0 || n > most {
		t.Errorf("read %d bytes in %v at a byte per %v", n, time.Since(start), cfg.DripInterval)
	}
	r := waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && !r.End.IsZero() })
	if d := r.End.Sub(r.Start); r.Status != 200 || int64(r.Bytes) > int64(d/cfg.DripInterval)+2 || d > cfg.HangLimit-time.Second {
		t.Errorf("log: %+v; want the drip stopped when the client left", r)
	}

	// At HangLimit the body is cut short.
	resp, err = c.Get("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil || len(b) > int(cfg.HangLimit/cfg.DripInterval)+10 || !bytes.HasPrefix(w.dripBody, b) {
		t.Errorf("read %d bytes: %v; want a body cut at HangLimit", len(b), err)
	}
	if len(w.dripBody) != DripBodyBytes || !bytes.HasPrefix(w.dripBody, []byte("<!DOCTYPE html>")) {
		t.Errorf("drip body of %d bytes", len(w.dripBody))
	}
}

func TestHugeHeaders(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileHugeHeaders))
	h := hostileHost(t, w, HostileHugeHeaders)
	conn := rawRequest(t, h, "/")
	got, err := readFor(conn, 5*time.Second)
	if err != io.EOF {
		t.Fatalf("read %d bytes: %v", len(got), err)
	}
	end := bytes.Index(got, []byte("\r\n\r\n")) + 4
	if end != HugeHeaderBytes || HugeHeaderBytes <= 2<<20 || string(got[end:]) != hugeHeadersBody {
		t.Errorf("header block of %d bytes, body %q", end, got[max(end, 0):])
	}
	if n := bytes.Count(got, []byte("\r\nX-Filler-")); n < 10000 {
		t.Errorf("%d filler headers", n)
	}

	// Go's client takes them by default (up to 10 MiB); a crawler must
	// set a lower limit.
	c := newClient(t, w)
	if r := get(t, c, "http://"+h.Authority+"/"); r.status != 200 || len(r.header) < 10000 || string(r.body) != hugeHeadersBody {
		t.Errorf("default client: %d, %d headers", r.status, len(r.header))
	}
	c.Transport.(*http.Transport).MaxResponseHeaderBytes = 1 << 20
	if resp, err := c.Get("http://" + h.Authority + "/"); err == nil || !strings.Contains(err.Error(), "exceeded") {
		if err == nil {
			resp.Body.Close()
		}
		t.Errorf("1 MiB limit: %v", err)
	}
	waitIdle(t, w)
	for _, r := range w.Log() {
		if r.Path == "/" && r.End.IsZero() {
			t.Errorf("log: %+v", r)
		}
	}
	if r := w.Log()[0]; r.Status != 200 || r.Bytes != int64(len(hugeHeadersBody)) {
		t.Errorf("log: %+v", r)
	}
}

func TestMalformed(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileMalformed))
	h := hostileHost(t, w, HostileMalformed)
	c := newClient(t, w)
	base := "http://" + h.Authority
	r := get(t, c, base+"/")
	if r.status != 200 || len(r.body) < 5*MalformedDivs || bytes.Count(r.body, []byte("<div>")) != MalformedDivs || bytes.IndexByte(r.body, 0) < 0 {
		t.Fatalf("%d, %d bytes", r.status, len(r.body))
	}
	// The ground truth of MalformedLinks: a tokenizer finds the three
	// links, and otherwise only hrefs under /bad/; not the commented one.
	var good []string
	for _, href := range anchorHrefs(r.body) {
		switch {
		case strings.HasPrefix(href, "/bad/"):
		case href == "/m/hidden":
			t.Error("the link inside the unclosed comment was found")
		default:
			good = append(good, href)
		}
	}
	if !slices.Equal(good, MalformedLinks()) {
		t.Errorf("links %q, want %q", good, MalformedLinks())
	}
	if i := bytes.Index(r.body, []byte(`href="/m/1"`)); i < 0 || i > 1024 {
		t.Errorf("first link at %d, want early", i)
	}
	if _, err := html.Parse(bytes.NewReader(r.body)); err != nil {
		t.Logf("html.Parse: %v", err)
	}
	for _, p := range MalformedLinks() {
		if r := get(t, c, base+p); r.status != 200 || len(anchorHrefs(r.body)) != 0 || !strings.Contains(string(r.body), "</html>") {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	wantNotFound(t, c, base, "/m/hidden", "/bad/1", "/m/4", "/robots.txt")
}

func TestCharsets(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileCharsets))
	h := hostileHost(t, w, HostileCharsets)
	c := newClient(t, w)
	base := "http://" + h.Authority
	home := get(t, c, base+"/")
	if home.status != 200 || home.header.Get("Content-Type") != htmlUTF8 || utf8.Valid(home.body) {
		t.Errorf("/: %d %q, valid UTF-8 %v", home.status, home.header.Get("Content-Type"), utf8.Valid(home.body))
	}
	if got := anchorHrefs(home.body); !slices.Equal(got, []string{"/c/1", "/c/2", "/c/3", "/c/4"}) {
		t.Errorf("/ links %q", got)
	}
	tests := []struct {
		path, ctype, has string
		valid            bool // the body is valid UTF-8
	}{
		{"/c/1", htmlUTF8, `<meta charset="windows-1252">` + "<title>Windows-1252</title></head>\n<body>\n<p>caf\xe9 \x93", false},
		{"/c/2", "text/html; charset=x-bogus", `<meta charset="x-bogus">`, true},
		{"/c/3", "text/html; charset=iso-8859-1", "\x82\xb1\x82\xf1", false},
		{"/c/4", "text/html", "\xff\xfe<\x00!\x00", false},
		{"/c/ok", htmlUTF8, "plain UTF-8", true},
	}
	for _, tc := range tests {
		r := get(t, c, base+tc.path)
		if r.status != 200 || r.header.Get("Content-Type") != tc.ctype || !strings.Contains(string(r.body), tc.has) || utf8.Valid(r.body) != tc.valid {
			t.Errorf("%s: %d %q, valid UTF-8 %v: %q", tc.path, r.status, r.header.Get("Content-Type"), utf8.Valid(r.body), r.body[:min(len(r.body), 120)])
		}
		body := r.body
		if tc.path == "/c/4" {
			u := make([]uint16, 0, len(body)/2)
			for i := 2; i+1 < len(body); i += 2 {
				u = append(u, uint16(body[i])|uint16(body[i+1])<<8)
			}
			body = []byte(string(utf16.Decode(u)))
			if !strings.Contains(string(body), "caf\u00e9, \u65e5\u672c") {
				t.Errorf("/c/4 decodes to %q", body)
			}
		}
		want := []string{"/c/ok"}
		if tc.path == "/c/ok" {
			want = nil
		}
		if got := anchorHrefs(body); !slices.Equal(got, want) {
			t.Errorf("%s: links %q", tc.path, got)
		}
	}
}

func TestBinary(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileBinary))
	h := hostileHost(t, w, HostileBinary)
	c := newClient(t, w)
	r := get(t, c, "http://"+h.Authority+"/")
	if r.status != 200 || r.header.Get("Content-Type") != htmlUTF8 || r.header.Get("Content-Length") != strconv.Itoa(BinaryBytes) || len(r.body) != BinaryBytes {
		t.Fatalf("%d %v, %d bytes", r.status, r.header, len(r.body))
	}
	if n := bytes.Count(r.body, []byte{0}); n < 1000 || utf8.Valid(r.body) {
		t.Errorf("%d NULs", n)
	}
	if again := get(t, c, "http://"+h.Authority+"/"); !bytes.Equal(again.body, r.body) {
		t.Error("the body changed")
	}
	w2 := startWeb(t, kindsConfig(HostileBinary))
	if !bytes.Equal(w2.binaryBody, r.body) {
		t.Error("the body is not determined by the seed")
	}
}

func TestReset(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileReset))
	h := hostileHost(t, w, HostileReset)
	c := newClient(t, w)
	resp, err := c.Get("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != ResetDeclaredBytes {
		t.Errorf("%d, length %d", resp.StatusCode, resp.ContentLength)
	}
	b, err := io.ReadAll(resp.Body)
	if err == nil || len(b) > ResetBytes || !bytes.HasPrefix(w.resetBody, b) {
		t.Errorf("read %d bytes: %v; want at most %d and an error", len(b), err, ResetBytes)
	}
	t.Logf("read %d bytes, then %v", len(b), err)

	// On the wire: the whole head and part, at most all, of the body, then
	// a reset, not an orderly close.
	conn := rawRequest(t, h, "/")
	got, err := readFor(conn, 5*time.Second)
	if err == io.EOF || isTimeout(err) || !bytes.HasPrefix(got, w.resetHead) || len(got) > len(w.resetHead)+ResetBytes {
		t.Errorf("read %d bytes: %v; want a reset", len(got), err)
	}
	r := waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && !r.End.IsZero() })
	if r.Status != 200 || r.Bytes != ResetBytes {
		t.Errorf("log: %+v", r)
	}
}

func TestHang(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileHang))
	h := hostileHost(t, w, HostileHang)
	c := newClient(t, w)
	if r := get(t, c, "http://"+h.Authority+"/robots.txt"); r.status != 404 {
		t.Errorf("robots.txt: %d", r.status)
	}
	start := time.Now()
	conn := rawRequest(t, h, "/")
	got, err := readFor(conn, 10*time.Second)
	if d := time.Since(start); len(got) != 0 || err != io.EOF || d < 350*time.Millisecond || d > 8*time.Second {
		t.Errorf("after %v: %q, %v; want nothing, then EOF at HangLimit", d, got, err)
	}
	r := waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && r.Path == "/" && !r.End.IsZero() })
	if r.Status != 0 || r.End.Sub(r.Start) < 350*time.Millisecond {
		t.Errorf("log: %+v", r)
	}
}

func TestRedirectLoopAndChain(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileRedirectLoop, HostileRedirectChain))
	c := newClient(t, w)
	follow := func(h HostInfo, limit int) (hops []string, final response) {
		u := "http://" + h.Authority + "/"
		for range limit {
			r := get(t, c, u)
			if r.status != http.StatusFound {
				return hops, r
			}
			u = mustParse(t, u).ResolveReference(mustParse(t, r.header.Get("Location"))).String()
			hops = append(hops, strings.TrimPrefix(u, "http://"+h.Authority))
		}
		return hops, response{}
	}
	loop := hostileHost(t, w, HostileRedirectLoop)
	hops, _ := follow(loop, 6)
	if !slices.Equal(hops, []string{"/loop/a", "/loop/b", "/loop/a", "/loop/b", "/loop/a", "/loop/b"}) {
		t.Errorf("loop: %q", hops)
	}
	chain := hostileHost(t, w, HostileRedirectChain)
	hops, final := follow(chain, 100)
	if len(hops) != RedirectChainHops || hops[0] != "/hop/1" || hops[19] != "/hop/20" || hops[20] != "/end" || final.status != 200 || !strings.Contains(string(final.body), "</html>") {
		t.Errorf("chain: %d hops %q, final %d", len(hops), hops, final.status)
	}
	wantNotFound(t, c, "http://"+chain.Authority, "/hop/0", "/hop/21", "/hop/01", "/hop/x", "/robots.txt")
}

func TestManyLinks(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileManyLinks))
	h := hostileHost(t, w, HostileManyLinks)
	c := newClient(t, w)
	base := "http://" + h.Authority
	r := get(t, c, base+"/")
	hrefs := anchorHrefs(r.body)
	distinct := map[string]bool{}
	for _, href := range hrefs {
		distinct[href] = true
	}
	if r.status != 200 || len(hrefs) != ManyLinksCount || len(distinct) != ManyLinksCount || !distinct["/l/0"] || !distinct["/l/99999"] {
		t.Errorf("%d: %d links, %d distinct", r.status, len(hrefs), len(distinct))
	}
	for _, p := range []string{"/l/0", "/l/54321", "/l/99999"} {
		if r := get(t, c, base+p); r.status != 200 || len(anchorHrefs(r.body)) != 0 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
	wantNotFound(t, c, base, "/l/100000", "/l/007", "/l/-1", "/l/")
}

func TestHugeRobots(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileHugeRobots))
	h := hostileHost(t, w, HostileHugeRobots)
	c := newClient(t, w)
	base := "http://" + h.Authority
	r := get(t, c, base+"/robots.txt")
	if r.status != 200 || len(r.body) != HugeRobotsBytes || !strings.HasPrefix(string(r.body), "User-agent: *\nDisallow: /private\n") {
		t.Fatalf("%d, %d bytes: %q", r.status, len(r.body), r.body[:min(len(r.body), 64)])
	}
	// A reader of the first 500 KiB sees one group: /private and junk.
	head := string(r.body[:500<<10])
	if strings.Count(head, "User-agent:") != 1 || strings.Count(string(r.body), "User-agent:") != 1 || strings.Contains(string(r.body), "Disallow: /public") || strings.Count(head, "Disallow: /junk/") < 10000 {
		t.Error("unexpected rules")
	}
	if got := anchorHrefs(get(t, c, base+"/").body); !slices.Equal(got, []string{"/private/x", "/public/y"}) {
		t.Errorf("/ links %q", got)
	}
	for _, p := range []string{"/private/x", "/public/y"} {
		if r := get(t, c, base+p); r.status != 200 {
			t.Errorf("%s: %d", p, r.status)
		}
	}
}

func TestStorms(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(HostileStorm429, HostileStorm503))
	c := newClient(t, w)
	for kind, status := range map[string]int{HostileStorm429: 429, HostileStorm503: 503} {
		h := hostileHost(t, w, kind)
		if r := get(t, c, "http://"+h.Authority+"/robots.txt"); r.status != 404 {
			t.Errorf("%s robots.txt: %d", kind, r.status)
		}
		for _, p := range []string{"/", "/", "/other?x=1"} {
			r := get(t, c, "http://"+h.Authority+p)
			if r.status != status || r.header.Get("Retry-After") != "1" || len(r.body) > 64 {
				t.Errorf("%s %s: %d %v %q", kind, p, r.status, r.header, r.body)
			}
		}
	}
}

// crawlTrap follows the links of a trap breadth first from "/" and returns
// the pages fetched, by URL; every one must be a valid 200 page of its own
// text.
func crawlTrap(t *testing.T, w *Web, kind string, limit int) map[string][]byte {
	t.Helper()
	h := hostileHost(t, w, kind)
	c := newClient(t, w)
	pages := map[string][]byte{}
	texts := map[string]string{}
	queue := []string{"http://" + h.Authority + "/"}
	for len(queue) > 0 && len(pages) < limit {
		u := queue[0]
		queue = queue[1:]
		if _, ok := pages[u]; ok {
			continue
		}
		r := get(t, c, u)
		if r.status != 200 || r.header.Get("Content-Type") != htmlUTF8 || !strings.HasSuffix(string(r.body), "</html>\n") {
			t.Fatalf("%s: %d %v", u, r.status, r.header)
		}
		text := firstParagraph(r.body)
		if len(strings.Fields(text)) < trapWords || texts[text] != "" {
			t.Fatalf("%s: text of %d words, same as %s", u, len(strings.Fields(text)), texts[text])
		}
		texts[text] = u
		pages[u] = r.body
		for _, l := range resolveAll(t, u, anchorHrefs(r.body)) {
			if !strings.HasPrefix(l, "http://"+h.Authority+"/") {
				t.Fatalf("%s links off the host: %s", u, l)
			}
			queue = append(queue, l)
		}
	}
	// Linked pages do not look alike, as near-duplicates would.
	var prev string
	for _, b := range pages {
		text := firstParagraph(b)
		if prev != "" && overlap(text, prev) > 0.9 {
			t.Errorf("two pages share %.0f%% of their words", 100*overlap(text, prev))
		}
		prev = text
	}
	return pages
}

func TestTrapSessions(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(TrapSessions))
	pages := crawlTrap(t, w, TrapSessions, 60)
	if len(pages) != 60 {
		t.Fatalf("%d pages", len(pages))
	}
	ids := map[string]bool{}
	for u, b := range pages {
		hrefs := anchorHrefs(b)
		if len(hrefs) != 2 {
			t.Fatalf("%s: links %q", u, hrefs)
		}
		var id [2]string
		for i, href := range hrefs {
			rest, ok := strings.CutPrefix(href, "/s/")
			id[i], _, _ = strings.Cut(rest, "/p/")
			if !ok || !isSessionID(id[i]) {
				t.Fatalf("%s: link %s", u, href)
			}
		}
		if id[0] != id[1] || ids[id[0]] {
			t.Errorf("%s: ids %v, want one fresh id", u, id)
		}
		ids[id[0]] = true
	}
	// The same page fetched again links with a new id.
	h := hostileHost(t, w, TrapSessions)
	c := newClient(t, w)
	a, b := get(t, c, "http://"+h.Authority+"/"), get(t, c, "http://"+h.Authority+"/")
	if slices.Equal(anchorHrefs(a.body), anchorHrefs(b.body)) {
		t.Error("the same session id twice")
	}
	wantNotFound(t, c, "http://"+h.Authority, "/s/0123456789abcdef01234567/p/x", "/s/0123456789ABCDEF01234567/p/1", "/s/short/p/1", "/s/0123456789abcdef01234567/p/01")
}

func TestTrapFacets(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(TrapFacets))
	pages := crawlTrap(t, w, TrapFacets, FacetPages+10)
	if len(pages) != FacetPages+1 { // and "/"
		t.Errorf("%d pages, want %d and /", len(pages), FacetPages)
	}
	for u, b := range pages {
		q := mustParse(t, u).Query()
		if len(q) > 4 || strings.HasSuffix(u, "/") && len(anchorHrefs(b)) != 1 || !strings.HasSuffix(u, "/") && len(anchorHrefs(b)) != 18 {
			t.Errorf("%s: %d params, %d links", u, len(q), len(anchorHrefs(b)))
		}
	}
	h := hostileHost(t, w, TrapFacets)
	c := newClient(t, w)
	base := "http://" + h.Authority
	if a, b := get(t, c, base+"/shop?color=red&sort=new"), get(t, c, base+"/shop?sort=new&color=red"); b.status != 200 || !bytes.Equal(a.body, b.body) {
		t.Error("a reordered query is not the same page")
	}
	wantNotFound(t, c, base, "/shop?color=pink", "/shop?color=red&color=blue", "/shop?page=2", "/shop/")
}

func TestTrapDeep(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(TrapDeep))
	pages := crawlTrap(t, w, TrapDeep, 200)
	longest := ""
	for u := range pages {
		if len(u) > len(longest) {
			longest = u
		}
	}
	h := hostileHost(t, w, TrapDeep)
	if len(pages) != 200 || strings.Count(longest, "/a/b/") < 3 {
		t.Errorf("%d pages, longest %s", len(pages), longest)
	}
	// Far deeper than any crawl goes, still a page.
	c := newClient(t, w)
	deep := "http://" + h.Authority + strings.Repeat("/a/b/c", 200) + "/"
	if r := get(t, c, deep); r.status != 200 || !slices.Equal(anchorHrefs(r.body), []string{"a/b/", "c/"}) {
		t.Errorf("deep page: %d", r.status)
	}
	wantNotFound(t, c, "http://"+h.Authority, "/a/b", "/a/d/", "/a//b/")
}

func TestTrapCalendar(t *testing.T) {
	t.Parallel()
	w := startWeb(t, kindsConfig(TrapCalendar))
	pages := crawlTrap(t, w, TrapCalendar, 150)
	h := hostileHost(t, w, TrapCalendar)
	base := "http://" + h.Authority
	if len(pages) != 150 || pages[base+"/cal/2026/11/"] == nil || pages[base+"/cal/2027/11/"] == nil {
		t.Errorf("%d pages", len(pages))
	}
	c := newClient(t, w)
	for p, want := range map[string][]string{
		"/cal/2026/11/": {"/cal/2026/10/", "/cal/2026/12/", "/cal/2025/11/", "/cal/2027/11/"},
		"/cal/2026/01/": {"/cal/2025/12/", "/cal/2026/02/", "/cal/2025/01/", "/cal/2027/01/"},
		"/cal/0001/01/": {"/cal/0001/02/", "/cal/0002/01/"},
		"/cal/9999/12/": {"/cal/9999/11/", "/cal/9998/12/"},
	} {
		if r := get(t, c, base+p); r.status != 200 || !slices.Equal(anchorHrefs(r.body), want) {
			t.Errorf("%s: %d, links %q", p, r.status, anchorHrefs(r.body))
		}
	}
	wantNotFound(t, c, base, "/cal/0000/01/", "/cal/2026/13/", "/cal/2026/1/", "/cal/+026/01/", "/cal/2026/11")
}

// TestCloseReleasesHostileConnections closes a web while clients hold
// connections to its dripping, hanging and hijacked hosts: Close returns at
// once, every client sees its connection end, every request is logged
// complete, and no goroutine is left.
func TestCloseReleasesHostileConnections(t *testing.T) {
	// Not parallel: goleak must see this test's goroutines alone.
	ignore := goleak.IgnoreCurrent()
	cfg := kindsConfig(HostileDripHeaders, HostileDripBody, HostileHugeHeaders, HostileReset, HostileHang, HostileSilent)
	cfg.HangLimit = time.Minute
	cfg.DripInterval = 500 * time.Millisecond
	w, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	var wg sync.WaitGroup
	ended := make(chan string, 16)
	hold := func(kind string, c net.Conn) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := readFor(c, 10*time.Second)
			if isTimeout(err) {
				err = nil
			}
			ended <- kind + ": " + errString(err)
			c.Close()
		}()
	}
	hosts := map[string]HostInfo{}
	for _, h := range w.Hosts() {
		hosts[h.Hostile] = h
	}
	dial := func(kind string) net.Conn {
		h := hosts[kind]
		c, err := net.Dial("tcp", h.Addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+h.Authority+"\r\n\r\n")
		return c
	}
	// The huge-headers client does not read, so the server's write blocks.
	stalled := dial(HostileHugeHeaders)
	defer stalled.Close()
	for _, kind := range []string{HostileDripHeaders, HostileDripBody, HostileHang, HostileSilent, HostileReset} {
		hold(kind, dial(kind))
	}
	// And one HTTP client, reading the drip-body body.
	resp, err := (&http.Client{Transport: tr}).Get("http://" + hosts[HostileDripBody].Addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ended <- "drip-body client: " + errString(err)
	}()

	// Wait until all seven requests are in, and all but reset's (and
	// perhaps huge-headers', if its 2 MiB fit the socket buffers) busy.
	deadline := time.Now().Add(5 * time.Second)
	for {
		busy := 0
		for _, r := range w.Log() {
			if r.End.IsZero() {
				busy++
			}
		}
		if len(w.Log()) == 7 && busy >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests in flight: %+v", busy, w.Log())
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v", d)
	}
	for _, r := range w.Log() {
		if r.End.IsZero() {
			t.Errorf("after Close, still in flight: %+v", r)
		}
	}
	if n := len(w.Log()); n != 7 {
		t.Errorf("%d log entries, want 7", n)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a client's connection outlived Close")
	}
	close(ended)
	for s := range ended {
		t.Log(s)
	}
	stalled.Close()
	tr.CloseIdleConnections()
	goleak.VerifyNone(t, ignore)
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// The script hosts start only when named, after the hostile ones, and
// their app's links are in no HTML but the scripts'.
func TestScriptHosts(t *testing.T) {
	t.Parallel()
	w := startWeb(t, Config{Seed: 3, Hosts: 2, PagesPerHost: 12, HostileKinds: []string{ScriptApp, HostileSilent, ScriptNone}})
	var kinds []string
	for _, h := range w.Hosts()[2:] {
		kinds = append(kinds, h.Hostile)
	}
	if !slices.Equal(kinds, []string{HostileSilent, ScriptApp, ScriptNone}) {
		t.Fatalf("started %v", kinds)
	}
	if slices.Contains(HostileKindsAll(), ScriptApp) {
		t.Fatal("Hostile would start the script hosts")
	}
	c := newClient(t, w)
	body := func(url string) string { return string(get(t, c, url).body) }
	app := w.HostileSeeds()[1]
	home := body(app)
	for _, p := range ScriptAppLinks {
		if strings.Contains(home, `href="`+p) {
			t.Errorf("the app's HTML links to %s", p)
		}
		if !strings.Contains(body(app+p[1:]), `href="/"`) {
			t.Errorf("%s is not a page linking home", p)
		}
	}
	for _, p := range []string{"app.js", "links.json", "more.json", "logo.png"} {
		if body(app+p) == "" {
			t.Errorf("%s is empty", p)
		}
	}
	if none := body(w.HostileSeeds()[2] + "p/8"); !strings.Contains(none, "<noscript>") || !strings.Contains(none, `href="/p/1"`) {
		t.Errorf("script-none page: %s", none)
	}
}

// The documentation site: every page links every other in its HTML, and
// loads the shared requisites; the search page says in a <noscript> what
// needs scripts; text assets are gzipped for a client that asks.
func TestScriptDocs(t *testing.T) {
	t.Parallel()
	w := startWeb(t, Config{Seed: 3, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{ScriptDocs}})
	c := newClient(t, w)
	site := strings.TrimSuffix(w.HostileSeeds()[0], "/")
	pages := append([]string{"/", "/search.html"}, DocsPages...)
	for _, p := range pages {
		r := get(t, c, site+p)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d", p, r.status)
		}
		for _, q := range append(DocsPages, "/search.html", "/_static/theme.css", "/_static/jquery.js", "/_static/logo.svg") {
			if !strings.Contains(string(r.body), `href="`+q+`"`) && !strings.Contains(string(r.body), `src="`+q+`"`) {
				t.Errorf("%s does not name %s", p, q)
			}
		}
		if strings.Contains(string(r.body), "icon") {
			t.Errorf("%s names an icon: a browser would not ask for /favicon.ico", p)
		}
	}
	if b := get(t, c, site+"/search.html").body; !strings.Contains(string(b), "<noscript>") || !strings.Contains(string(b), "searchtools.js") {
		t.Errorf("search page: %s", b)
	}
	for _, p := range append(DocsShared, DocsSheetOnly, "/_static/searchtools.js", "/searchindex.json") {
		if r := get(t, c, site+p); r.status != http.StatusOK || len(r.body) == 0 {
			t.Errorf("%s: %d, %d bytes", p, r.status, len(r.body))
		}
	}
	req, _ := http.NewRequest(http.MethodGet, site+"/_static/theme.css", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("theme.css not gzipped for a client that asks: %v", resp.Header)
	}
	if r := get(t, c, site+"/robots.txt"); r.status != http.StatusNotFound {
		t.Errorf("robots.txt: %d", r.status)
	}
	if r := get(t, c, site+DocsPlayground); r.status != http.StatusNotFound {
		t.Errorf("script-docs has a playground: %d", r.status)
	}
}

// The documentation site with a playground: its index links the
// playground, whose HTML links no example; its script's JSON does.
func TestScriptDocsApp(t *testing.T) {
	t.Parallel()
	w := startWeb(t, Config{Seed: 3, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{ScriptDocsApp}})
	c := newClient(t, w)
	site := strings.TrimSuffix(w.HostileSeeds()[0], "/")
	if home := string(get(t, c, site+"/").body); !strings.Contains(home, `href="`+DocsPlayground+`"`) {
		t.Errorf("the index does not link the playground: %s", home)
	}
	pg := string(get(t, c, site+DocsPlayground).body)
	js := string(get(t, c, site+"/playground/examples.json").body)
	for _, ex := range DocsExamples {
		if strings.Contains(pg, ex) || !strings.Contains(js, ex) {
			t.Errorf("%s: in the playground's HTML, or not in its JSON", ex)
		}
		if r := get(t, c, site+ex); r.status != http.StatusOK || !strings.Contains(string(r.body), "<noscript>") {
			t.Errorf("%s: %d %s", ex, r.status, r.body)
		}
	}
	if !strings.Contains(pg, "<noscript>") || !strings.Contains(pg, "/_static/theme.css") || !strings.Contains(pg, "/_static/logo.svg") {
		t.Errorf("the playground is not a shell with the theme: %s", pg)
	}
}
