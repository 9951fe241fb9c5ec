package synthweb

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// Names of the hostile hosts that follow the first four. Unless said
// otherwise, each answers robots.txt and every path it does not name with
// 404, and its pages are small valid HTML.
const (
	// HostileDripHeaders answers "/" with a status line and headers sent
	// one byte every Config.DripInterval, a header block that never ends:
	// at HangLimit the connection is closed. The request is logged with
	// status 0, as no response was ever complete. A crawler must count it
	// a timeout (its header or total deadline), not a response.
	HostileDripHeaders = "drip-headers"
	// HostileDripBody answers "/" with proper headers at once (200,
	// text/html, Content-Length DripBodyBytes), then the body one byte
	// every Config.DripInterval; at HangLimit the connection is closed
	// short of Content-Length. A crawler must count it a timeout (total
	// or body deadline): a deadline on the headers alone never fires.
	HostileDripBody = "drip-body"
	// HostileHugeHeaders answers "/" with 200 and a header block of
	// exactly HugeHeaderBytes (thousands of X-Filler-N headers), then a
	// small HTML page, and closes the connection. A crawler must refuse
	// it as oversized headers: Go's http.Transport accepts up to 10 MiB of
	// them unless MaxResponseHeaderBytes is set.
	HostileHugeHeaders = "huge-headers"
	// HostileMalformed serves "/" as broken HTML: see MalformedLinks for
	// what a parser must find in it. Its pages /m/1, /m/2 and /m/3 are
	// small and valid. A crawler must count "/" a fetched page whose links
	// include those three (and at most junk under /bad/, which 404s), and
	// must not crash, hang or blow up its memory on it.
	HostileMalformed = "malformed"
	// HostileCharsets serves pages whose declared and real encodings
	// disagree: "/" is labelled UTF-8 but holds invalid UTF-8, and links
	// to /c/1 (labelled UTF-8 by its header, windows-1252 by its meta
	// tag, and really windows-1252), /c/2 (labelled with the unknown
	// charset x-bogus), /c/3 (Shift_JIS labelled ISO-8859-1) and /c/4
	// (UTF-16LE with a byte order mark, labelled text/html without a
	// charset). Each /c/N links to /c/ok. Every page is 200: a crawler
	// must count six fetched pages (the link of /c/4 is found only by
	// decoding UTF-16, as its BOM says).
	HostileCharsets = "charsets"
	// HostileBinary serves "/" as "text/html; charset=utf-8" but its body
	// is BinaryBytes of pseudo-random bytes, NULs included, with
	// Content-Length. A crawler must count it a fetched page without
	// links (or refuse it as not HTML by sniffing).
	HostileBinary = "binary"
	// HostileReset answers "/" with 200 headers declaring ResetDeclaredBytes,
	// sends ResetBytes of the body and then resets the TCP connection. A
	// crawler must count it a failed (network error) fetch, not a page.
	HostileReset = "reset"
	// HostileHang answers robots.txt 404 at once, but holds "/" without a
	// response until HangLimit (or Close), then drops the connection: an
	// HTTP server that stops answering after the crawler has found it
	// alive, unlike the silent host, which never answers anything. A
	// crawler must count it a timeout.
	HostileHang = "hang"
	// HostileRedirectLoop redirects "/" to /loop/a, which redirects to
	// /loop/b, which redirects back to /loop/a, for ever (302s with
	// host-relative Locations). A crawler must count it a redirect loop
	// (or too many redirects) and fetch nothing else there.
	HostileRedirectLoop = "redirect-loop"
	// HostileRedirectChain redirects "/" to /hop/1, /hop/N to /hop/N+1 up
	// to /hop/20, and /hop/20 to /end, a small valid page:
	// RedirectChainHops redirects in all. A crawler with the usual cap of
	// 10 or fewer hops must count it too many redirects.
	HostileRedirectChain = "redirect-chain"
	// HostileManyLinks serves "/" as one HTML page with ManyLinksCount
	// distinct links, /l/0 to /l/99999, each a tiny page without links. A
	// crawler must bound the links it takes from one page, or its
	// frontier and budget must absorb them.
	HostileManyLinks = "many-links"
	// HostileHugeRobots serves a robots.txt of exactly HugeRobotsBytes
	// whose "User-agent: *" group starts with "Disallow: /private" and
	// goes on with junk Disallow lines. "/" links to /private/x and
	// /public/y. A crawler that parses the first 500 KiB of the file (RFC
	// 9309 §2.5) fetches "/" and /public/y, and never /private/x.
	HostileHugeRobots = "huge-robots"
	// HostileStorm429 answers robots.txt 404 and every other request 429
	// Too Many Requests with "Retry-After: 1". A crawler must back off,
	// retry within its limits and count "/" failed.
	HostileStorm429 = "storm-429"
	// HostileStorm503 is HostileStorm429 with 503 Service Unavailable.
	HostileStorm503 = "storm-503"
)

// Sizes and counts of the hostile hosts, for tests to check a crawl against.
const (
	// DripBodyBytes is the Content-Length the drip-body host declares.
	DripBodyBytes = 64 << 10
	// HugeHeaderBytes is the size of the huge-headers host's header block,
	// status line and final empty line included: over 2 MiB.
	HugeHeaderBytes = 2<<20 + 4<<10
	// MalformedDivs is the number of nested, never closed <div>s of the
	// malformed host's "/".
	MalformedDivs = 100_000
	// BinaryBytes is the size of the binary host's "/".
	BinaryBytes = 1 << 20
	// ResetDeclaredBytes is the Content-Length the reset host declares,
	// and ResetBytes what it sends before the reset.
	ResetDeclaredBytes = 1 << 20
	ResetBytes         = 64 << 10
	// RedirectChainHops is the number of redirects from the
	// redirect-chain host's "/" to its final page, /end.
	RedirectChainHops = 21
	// ManyLinksCount is the number of distinct links of the many-links
	// host's "/".
	ManyLinksCount = 100_000
	// HugeRobotsBytes is the size of the huge-robots host's robots.txt.
	HugeRobotsBytes = 6 << 20
)

// MalformedLinks returns the paths that a robust HTML parser finds on the
// malformed host's "/": /m/1, /m/2 and /m/3, plain links early in the
// document. What follows them, in this order, is the ground truth of what
// else a parser meets:
//
//   - NUL bytes in text, in a tag name and in an attribute value;
//   - an attribute value whose opening quote is closed only much later;
//   - stray "</" sequences, broken character references;
//   - anchors with unbalanced quotes: a conforming tokenizer (HTML5, as
//     golang.org/x/net/html's) takes hrefs out of them that all start with
//     "/bad/" (and then hold markup: "/bad/1>broken</a> <a href="), all
//     404, which a crawler may request or drop;
//   - MalformedDivs nested <div>s that are never closed, deeper than a tree
//     builder's limit: html.Parse fails on them ("open stack of elements
//     exceeds 512 nodes"), so only a tokenizer-based extractor, or one that
//     keeps what it found before an error, finds the links;
//   - a comment that is never closed, which runs to the end of the
//     document and hides the anchor to /m/hidden inside it: a crawler that
//     requests /m/hidden (404) scanned the bytes rather than parsing them.
func MalformedLinks() []string { return []string{"/m/1", "/m/2", "/m/3"} }

// hostileData holds the big bodies of the hostile hosts started, built once
// by prepareMore so that requests only copy them.
type hostileData struct {
	dripBody     []byte
	hugeHead     []byte // the whole header block of the huge-headers host
	malformed    []byte
	charsetPages map[string]rawPage
	binaryBody   []byte
	resetHead    []byte
	resetBody    []byte
	manyLinks    []byte
	hugeRobots   []byte
	brotliBomb   []byte
	zstdBomb     []byte
}

// rawPage is a body served with its own Content-Type.
type rawPage struct {
	ctype string
	body  []byte
}

const (
	htmlUTF8 = "text/html; charset=utf-8"
	// hugeHeadersBody is the page after the huge header block.
	hugeHeadersBody = "<!DOCTYPE html>\n<html><head><title>Huge headers</title></head><body><p>The headers were the hard part.</p></body></html>\n"
	// dripHeadersHead starts the drip-headers answer; dripHeaderLine then
	// repeats for ever, so the header block never ends.
	dripHeadersHead = "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
	dripHeaderLine  = "X-Drip: slow\r\n"
)

// prepareMore builds what a started host of the given kind needs beyond
// what prepareHostile builds.
func (w *Web) prepareMore(kind string) {
	ki, _ := hostileKindIndex(kind)
	switch kind {
	case HostileDripBody:
		b := []byte("<!DOCTYPE html>\n<html><head><title>Drip</title></head><body><p>")
		r := newRNG(w.cfg.Seed, streamHostile, uint64(ki), 0)
		b = w.text.appendExact(b, &r, DripBodyBytes-len(b)-len("</p></body></html>\n"))
		w.dripBody = append(b, "</p></body></html>\n"...)
	case HostileHugeHeaders:
		w.hugeHead = buildHugeHead()
	case HostileMalformed:
		w.malformed = buildMalformed()
	case HostileCharsets:
		w.charsetPages = buildCharsetPages()
	case HostileBinary:
		r := newRNG(w.cfg.Seed, streamHostile, uint64(ki), 0)
		b := make([]byte, BinaryBytes)
		for i := 0; i < len(b); i += 8 {
			v := r.next()
			for j := range 8 {
				b[i+j] = byte(v >> (8 * j))
			}
		}
		w.binaryBody = b
	case HostileReset:
		w.resetHead = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: " +
			strconv.Itoa(ResetDeclaredBytes) + "\r\n\r\n")
		b := []byte("<!DOCTYPE html>\n<html><head><title>Reset</title></head><body><p>")
		r := newRNG(w.cfg.Seed, streamHostile, uint64(ki), 0)
		w.resetBody = w.text.appendExact(b, &r, ResetBytes-len(b))
	case HostileManyLinks:
		b := make([]byte, 0, 26*ManyLinksCount)
		b = append(b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Many links</title></head>\n<body>\n<h1>Many links</h1>\n"...)
		for n := range ManyLinksCount {
			b = append(b, `<a href="/l/`...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, `">`...)
			b = strconv.AppendInt(b, int64(n), 10)
			b = append(b, "</a>\n"...)
		}
		w.manyLinks = append(b, "</body>\n</html>\n"...)
	case HostileHugeRobots:
		w.hugeRobots = buildHugeRobots()
	}
}

// buildHugeHead builds the huge-headers answer up to its body: fillers of
// 128 bytes, then one of the length that makes the block HugeHeaderBytes.
func buildHugeHead() []byte {
	b := make([]byte, 0, HugeHeaderBytes)
	b = append(b, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: "...)
	b = strconv.AppendInt(b, int64(len(hugeHeadersBody)), 10)
	b = append(b, "\r\nConnection: close\r\n"...)
	const line = 128
	value := strings.Repeat("0123456789abcdef", 2*line/16) // the last filler takes up to 2 lines
	for n := 0; len(b)+2*line+2 <= HugeHeaderBytes; n++ {
		start := len(b)
		b = append(b, "X-Filler-"...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ": "...)
		b = append(b, value[:line-(len(b)-start)-2]...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "X-Filler-End: "...)
	b = append(b, value[:HugeHeaderBytes-len(b)-4]...)
	return append(b, "\r\n\r\n"...)
}

// buildMalformed builds the malformed host's "/" as MalformedLinks
// describes it.
func buildMalformed() []byte {
	var b bytes.Buffer
	b.Grow(5*MalformedDivs + 4096)
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Malformed</title></head>\n<body>\n")
	b.WriteString(`<p>Start here: <a href="/m/1">first</a>, <a href="/m/2">second</a> and <a href="/m/3">third</a>.</p>` + "\n")
	b.WriteString("<p>NUL\x00bytes\x00 in text, <b\x00x>in a tag name</b\x00x> and <span title=\"in\x00value\">a value</span>.</p>\n")
	b.WriteString(`<p class="opened here>and closed only after <i>tags</i> and text, at this quote: ">the paragraph.</p>` + "\n")
	b.WriteString("<p>Stray </ end tags </3 </> <//> and references &#xZZ; &#99999999; &amp &unknown; &.</p>\n")
	b.WriteString(`<p><a href="/bad/1>broken</a> <a href="/bad/1b">after</a>` + "\n")
	b.WriteString(`<a href='/bad/2>single</a> and text'>closed</a>` + "\n")
	b.WriteString(`<a href=/bad/3 title="x>y">unquoted</a>` + "\n")
	b.WriteString(`<a href="/bad/4" href="/bad/4b" =x>repeated attributes</a></p>` + "\n")
	for range MalformedDivs {
		b.WriteString("<div>")
	}
	b.WriteString("\nThe bottom of the divs.\n")
	b.WriteString(`<!-- a comment never closed <a href="/m/hidden">hidden</a> -- >` + "\n")
	b.WriteString("<p>Still inside the comment. <a href=\"/m/hidden\">hidden</a></p>\n</body>\n</html>\n")
	return b.Bytes()
}

// Bodies of the charsets host. The windows-1252 text is "café “quoted” —
// €5 naïve", the Shift_JIS text "こんにちは、日本語の表とソ" (表 and ソ
// end in 0x5C, a backslash in ASCII).
const (
	charsetsLinks = `<ul><li><a href="/c/1">utf-8 header, windows-1252 meta</a></li>` +
		`<li><a href="/c/2">x-bogus</a></li><li><a href="/c/3">Shift_JIS as ISO-8859-1</a></li>` +
		`<li><a href="/c/4">UTF-16LE with BOM</a></li></ul>`
	win1252Text  = "caf\xe9 \x93quoted\x94 \x97 \x805 na\xefve"
	shiftJISText = "\x82\xb1\x82\xf1\x82\xc9\x82\xbf\x82\xcd\x81\x41\x93\xfa\x96\x7b\x8c\xea\x82\xcc\x95\x5c\x82\xc6\x83\x5c"
	okLink       = `<p><a href="/c/ok">the page that is fine</a></p>`
)

func buildCharsetPages() map[string]rawPage {
	page := func(meta, title, text, rest string) []byte {
		s := "<!DOCTYPE html>\n<html><head>" + meta + "<title>" + title + "</title></head>\n<body>\n<p>" + text + "</p>\n" + rest + "\n</body>\n</html>\n"
		return []byte(s)
	}
	// Invalid UTF-8: a lone continuation byte, bytes never valid, a
	// truncated sequence, an overlong encoding, a surrogate, a code point
	// beyond U+10FFFF.
	invalid := "Invalid: \x80 \xff\xfe \xc3\x28 \xe2\x82 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 end."
	utf16Doc := string(page(`<meta charset="utf-16le">`, "UTF-16", "UTF-16LE, caf\u00e9, \u65e5\u672c", okLink))
	u16 := utf16.Encode([]rune(utf16Doc))
	b16 := make([]byte, 2, 2+2*len(u16))
	b16[0], b16[1] = 0xff, 0xfe
	for _, u := range u16 {
		b16 = append(b16, byte(u), byte(u>>8))
	}
	return map[string]rawPage{
		"/":     {htmlUTF8, page(`<meta charset="utf-8">`, "Charsets", invalid, charsetsLinks)},
		"/c/1":  {htmlUTF8, page(`<meta charset="windows-1252">`, "Windows-1252", win1252Text, okLink)},
		"/c/2":  {"text/html; charset=x-bogus", page(`<meta charset="x-bogus">`, "Bogus", "An unknown charset.", okLink)},
		"/c/3":  {"text/html; charset=iso-8859-1", page("", "Shift_JIS", shiftJISText, okLink)},
		"/c/4":  {"text/html", b16},
		"/c/ok": {htmlUTF8, page(`<meta charset="utf-8">`, "Fine", "This page is plain UTF-8, and says so.", "")},
	}
}

// buildHugeRobots builds the huge-robots file: "Disallow: /private" first
// in the "*" group, then junk rules, then a comment that pads it to exactly
// HugeRobotsBytes.
func buildHugeRobots() []byte {
	b := make([]byte, 0, HugeRobotsBytes)
	b = append(b, "User-agent: *\nDisallow: /private\n"...)
	for n := 0; len(b) < HugeRobotsBytes-64; n++ {
		b = append(b, "Disallow: /junk/"...)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, '\n')
	}
	b = append(b, '#')
	for len(b) < HugeRobotsBytes-1 {
		b = append(b, '.')
	}
	return append(b, '\n')
}

// serveMore answers the hostile and trap hosts beyond the first four.
func (w *Web) serveMore(rw *logWriter, r *http.Request, h *host) {
	path := r.URL.Path
	switch h.hostile {
	case ScriptApp, ScriptNone, ScriptHang, ScriptThrottle:
		w.serveScript(rw, r, h)
	case ScriptDocs, ScriptDocsApp:
		w.serveDocs(rw, r, h)
	case BombBrotli, BombZstd:
		w.serveBomb(rw, r, h)
	case ScriptSPA:
		w.serveSPA(rw, r, h)
	case FailOutage, FailStorm429Bare, FailStorm503Bare, FailFlaky, FailRobots500, FailRobots429:
		w.serveFailing(rw, r, h)
	case TrapSessions:
		w.serveSessions(rw, r, h)
	case TrapFacets:
		w.serveFacets(rw, r, h)
	case FacetShop, PathFacetShop:
		w.serveFacetShop(rw, r, h)
	case GatedShop:
		w.serveGatedShop(rw, r, h)
	case WordPress:
		w.serveWordPress(rw, r, h)
	case Forum:
		w.serveForum(rw, r, h)
	case FilterShop, FilterPairShop:
		w.serveFilterShop(rw, r, h)
	case MediaWiki:
		w.serveMediaWiki(rw, r, h)
	case Newsroom:
		w.serveNewsroom(rw, r, h)
	case Collection:
		w.serveCollection(rw, r, h)
	case TrapDeep:
		w.serveDeep(rw, r, h)
	case TrapCalendar:
		w.serveCalendar(rw, r, h)
	case HostileLinger:
		w.serveLinger(rw, r, h)
	case HostileStorm429, HostileStorm503:
		if path == robotsPath {
			notFound(rw, r)
			return
		}
		status := http.StatusTooManyRequests
		if h.hostile == HostileStorm503 {
			status = http.StatusServiceUnavailable
		}
		rw.Header().Set("Retry-After", "1")
		writeBody(rw, r, status, "text/plain; charset=utf-8", http.StatusText(status)+"\n")
	case HostileMalformed:
		switch path {
		case "/":
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.malformed)
		case "/m/1", "/m/2", "/m/3":
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Page "+path[3:], 30, nil))
		default:
			notFound(rw, r)
		}
	case HostileCharsets:
		p, ok := w.charsetPages[path]
		if !ok {
			notFound(rw, r)
			return
		}
		writeBody(rw, r, http.StatusOK, p.ctype, p.body)
	case HostileRedirectLoop:
		switch path {
		case "/", "/loop/b":
			redirect(rw, "/loop/a", http.StatusFound)
		case "/loop/a":
			redirect(rw, "/loop/b", http.StatusFound)
		default:
			notFound(rw, r)
		}
	case HostileRedirectChain:
		w.serveRedirectChain(rw, r, h)
	case HostileManyLinks:
		if path == "/" {
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.manyLinks)
			return
		}
		n, ok := parseIndex(strings.CutPrefix(path, "/l/"))
		if !ok || n >= ManyLinksCount {
			notFound(rw, r)
			return
		}
		s := strconv.FormatUint(n, 10)
		writeBody(rw, r, http.StatusOK, htmlUTF8, "<!DOCTYPE html>\n<html><head><title>Leaf "+s+"</title></head><body><p>Leaf "+s+".</p></body></html>\n")
	case HostileHugeRobots:
		switch path {
		case robotsPath:
			writeBody(rw, r, http.StatusOK, "text/plain; charset=utf-8", w.hugeRobots)
		case "/":
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "Huge robots", 60, []string{"/private/x", "/public/y"}))
		case "/private/x", "/public/y":
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, path, 60, nil))
		default:
			notFound(rw, r)
		}
	default:
		if path != "/" {
			notFound(rw, r)
			return
		}
		switch h.hostile {
		case HostileBinary:
			writeBody(rw, r, http.StatusOK, htmlUTF8, w.binaryBody)
		case HostileHang:
			w.hang(r.Context())
		case HostileDripBody:
			w.serveDripBody(rw, r)
		case HostileDripHeaders:
			w.serveDripHeaders(rw)
		case HostileHugeHeaders:
			w.serveHugeHeaders(rw, r)
		case HostileReset:
			w.serveReset(rw, r)
		}
	}
}

func notFound(rw *logWriter, r *http.Request) {
	writeBody(rw, r, http.StatusNotFound, htmlUTF8, notFoundBody)
}

// parseIndex parses the canonical decimal form of a non-negative number
// below 2^62 (no sign, no leading zeros), taking strings.CutPrefix's result.
func parseIndex(s string, ok bool) (uint64, bool) {
	if !ok || s == "" || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 62)
	return n, err == nil
}

// serveRedirectChain answers "/" → /hop/1 → ... → /hop/20 → /end.
func (w *Web) serveRedirectChain(rw *logWriter, r *http.Request, h *host) {
	const last = RedirectChainHops - 1
	path := r.URL.Path
	switch path {
	case "/":
		redirect(rw, "/hop/1", http.StatusFound)
		return
	case "/end":
		writeBody(rw, r, http.StatusOK, htmlUTF8, w.smallPage(h, path, "The end of the chain", 60, nil))
		return
	}
	n, ok := parseIndex(strings.CutPrefix(path, "/hop/"))
	switch {
	case !ok || n < 1 || n > last:
		notFound(rw, r)
	case n == last:
		redirect(rw, "/end", http.StatusFound)
	default:
		redirect(rw, "/hop/"+strconv.FormatUint(n+1, 10), http.StatusFound)
	}
}

// serveDripBody sends the headers at once and then the body a byte per
// DripInterval, until the body ends, the client leaves, the web closes or
// HangLimit passes; the last two cut the connection short of the
// Content-Length.
func (w *Web) serveDripBody(rw *logWriter, r *http.Request) {
	hdr := rw.Header()
	hdr.Set("Content-Type", htmlUTF8)
	hdr.Set("Content-Length", strconv.Itoa(len(w.dripBody)))
	rw.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	rw.Flush()
	ctx := r.Context()
	limit := time.NewTimer(w.cfg.HangLimit)
	defer limit.Stop()
	tick := time.NewTicker(w.cfg.DripInterval)
	defer tick.Stop()
	for i := range w.dripBody {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		case <-w.closing:
			abort()
		case <-limit.C:
			abort()
		}
		if _, err := rw.Write(w.dripBody[i : i+1]); err != nil {
			return
		}
		rw.Flush()
	}
}

// serveDripHeaders writes an endless header block a byte per DripInterval
// on the raw connection (net/http would buffer the headers until the
// first body write), until the client leaves, the web closes or HangLimit
// passes.
func (w *Web) serveDripHeaders(rw *logWriter) {
	c, br := w.hijack(rw)
	gone := w.watchGone(br)
	limit := time.NewTimer(w.cfg.HangLimit)
	defer limit.Stop()
	tick := time.NewTicker(w.cfg.DripInterval)
	defer tick.Stop()
	var one [1]byte
	for i := 0; ; i++ {
		if i < len(dripHeadersHead) {
			one[0] = dripHeadersHead[i]
		} else {
			one[0] = dripHeaderLine[(i-len(dripHeadersHead))%len(dripHeaderLine)]
		}
		if _, err := c.Write(one[:]); err != nil {
			return
		}
		select {
		case <-tick.C:
		case <-gone:
			return
		case <-w.closing:
			return
		case <-limit.C:
			return
		}
	}
}

// serveHugeHeaders writes the prebuilt header block and the page on the
// raw connection, which net/http would otherwise make us assemble as a
// header map of thousands of entries per request.
func (w *Web) serveHugeHeaders(rw *logWriter, r *http.Request) {
	c, _ := w.hijack(rw)
	if _, err := c.Write(w.hugeHead); err != nil {
		return
	}
	rw.status = http.StatusOK
	if r.Method == http.MethodHead {
		return
	}
	n, _ := io.WriteString(c, hugeHeadersBody)
	rw.bytes = int64(n)
}

// serveReset writes the headers and the first ResetBytes of the body, then
// closes the connection with SO_LINGER 0, which sends a TCP RST instead
// of a FIN: the client's next read fails with "connection reset by peer".
func (w *Web) serveReset(rw *logWriter, r *http.Request) {
	c, _ := w.hijack(rw)
	if _, err := c.Write(w.resetHead); err != nil {
		return
	}
	rw.status = http.StatusOK
	if r.Method != http.MethodHead {
		n, _ := c.Write(w.resetBody)
		rw.bytes = int64(n)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close() // hostHandler's release closes it again, harmlessly
}

// hijack takes the connection of rw's request over from net/http, for the
// hosts that misbehave below HTTP. The connection then belongs to the web:
// it is tracked so that Close can close it (http.Server.Close no longer
// knows it), its deadline is HangLimit from now, and hostHandler closes and
// releases it when the handler returns. The handler is counted in w.wg
// from here on, as net/http's ConnState stops counting it at the hijack;
// the count is taken before that, while the connection's own count keeps
// w.wg above zero.
func (w *Web) hijack(rw *logWriter) (net.Conn, *bufio.Reader) {
	hj, ok := rw.ResponseWriter.(http.Hijacker)
	if !ok {
		abort()
	}
	w.wg.Add(1)
	c, brw, err := hj.Hijack()
	if err != nil {
		w.wg.Done()
		abort()
	}
	rw.conn = c
	w.connMu.Lock()
	closed := w.connsClosed
	if !closed {
		w.conns[c] = struct{}{}
	}
	w.connMu.Unlock()
	if closed {
		abort() // the web is closing; hostHandler releases c
	}
	_ = c.SetDeadline(time.Now().Add(w.cfg.HangLimit))
	return c, brw.Reader
}

// releaseConn closes a hijacked connection and ends its handler's count.
func (w *Web) releaseConn(c net.Conn) {
	w.connMu.Lock()
	delete(w.conns, c)
	w.connMu.Unlock()
	_ = c.Close()
	w.wg.Done()
}

// closeConns closes every hijacked connection, and any hijacked later.
func (w *Web) closeConns() {
	w.connMu.Lock()
	defer w.connMu.Unlock()
	w.connsClosed = true
	for c := range w.conns {
		_ = c.Close()
	}
}

// watchGone reads (and discards) what the client of a hijacked connection
// sends, and closes the channel it returns when the client closes the
// connection or the connection is closed under it: after a hijack,
// net/http no longer cancels the request's context when the client leaves.
func (w *Web) watchGone(br *bufio.Reader) <-chan struct{} {
	gone := make(chan struct{})
	w.wg.Add(1) // the hijacked handler's count keeps w.wg above zero
	go func() {
		defer w.wg.Done()
		defer close(gone)
		_, _ = io.Copy(io.Discard, br)
	}()
	return gone
}
