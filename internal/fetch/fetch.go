// Package fetch performs one bounded HTTP GET, safe against SSRF and hostile
// servers, and returns the exchange as it went over the wire.
//
// Every connection is made to an address that the SSRF guard
// (code.dny.dev/ssrf) accepted at connect time, after DNS, so a redirect or a
// DNS answer cannot lead the crawler into private networks. Redirects are
// not followed: the crawler schedules each hop through its frontier, where
// robots.txt and politeness apply. Every read is bounded in time (connect,
// TLS, response headers, silence between reads, total) and in size (headers,
// wire body, decoded body).
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Values of Response.Truncated, as in the WARC-Truncated header.
const (
	TruncatedLength     = "length"
	TruncatedTime       = "time"
	TruncatedDisconnect = "disconnect"
)

// Default request headers. A caller header of the same name replaces them.
const (
	acceptValue = "text/html,application/xhtml+xml,*/*;q=0.8"
	// What browsers send, so that a server answers as it does them (some
	// answer in brotli or zstd whatever is asked): every one is decoded.
	acceptEncodingValue = "gzip, deflate, br, zstd"
)

// Response is one HTTP exchange as it went over the wire.
type Response struct {
	URL        string // the URL requested
	StatusCode int
	Status     string // e.g. "200 OK"
	Proto      string // e.g. "HTTP/1.1"
	Header     http.Header

	// RequestHeader is the request as written to the connection: request
	// line, headers and the blank line, for a WARC request record.
	RequestHeader []byte

	// ResponseHeader is the status line, header fields and blank line
	// exactly as read from the connection: the server's case, order,
	// duplicates, folded lines and line ends (any 1xx interim responses
	// before it are left out).
	ResponseHeader []byte

	// Body is the entity body as received: de-chunked, not content-decoded,
	// at most MaxBodyBytes. It is what WARC 1.1 calls the payload (its
	// transfer coding removed, its content coding kept).
	Body []byte

	// WireBody is the message body as it crossed the connection, when that
	// differs from Body: with its chunk sizes, extensions and trailer
	// section (Transfer-Encoding: chunked). Nil when it is Body. Cut where
	// Body was cut.
	WireBody []byte

	// Protocol is the protocol the exchange was made in, as the WARC-Protocol
	// field names it ("http/1.1", "http/1.0", "h2"), and TLS its TLS
	// version ("tls/1.3") and CipherSuite its cipher suite (the IANA name),
	// both empty over plain TCP. Over h2 (Config.HTTP2), RequestHeader and
	// ResponseHeader are not the bytes sent, which were binary frames, but
	// the same messages rendered in HTTP/1.1 form (IIPC's HTTP/2 proposal):
	// an "HTTP/1.1" status line and the fields as net/http parsed them.
	Protocol, TLS, CipherSuite string

	// CertificateError is why the server's certificate failed
	// verification (an x509 error: unknown authority, another host's
	// name, expired), for a host of Config.InsecureTLS, whose answer is
	// taken all the same; nil when it verified, over plain HTTP, and for
	// every other host, whose failed handshake is a KindTLS error.
	CertificateError error

	req  *http.Request  // for Rendered
	resp *http.Response // for Rendered

	// Decoded is Body with its Content-Encoding undone (gzip, deflate, br,
	// zstd, or a stack of them), at most MaxBodyBytes however small Body
	// is; the same slice as Body when there is no coding.
	// If decoding fails, DecodeErr says why and Decoded holds what could be
	// decoded, or the undecoded bytes if the coding is unknown or its
	// header is not even valid (servers mislabel plain bodies).
	Decoded   []byte
	DecodeErr error

	// Truncated is "" or why Body is incomplete: "length" (MaxBodyBytes
	// reached), "time" (IdleTimeout or Timeout passed mid-body) or
	// "disconnect" (the connection broke or the framing was bad). It
	// describes Body, the bytes that go to the archive; a decoded body
	// over the cap is reported by DecodeErr (ErrDecodedTooLarge) instead.
	Truncated string

	// Refused says Config.Bodies refused the body of this media type: it
	// was not read, and Truncated is "length".
	Refused bool

	// Location is, for a 3xx, the Location header resolved against URL;
	// otherwise "".
	Location string

	RemoteAddr string // ip:port actually connected to
	Start      time.Time
	Duration   time.Duration // from Start to the end of the body
}

// Fetcher performs GETs over one shared, keep-alive http.Transport. It is
// safe for concurrent use.
type Fetcher struct {
	cfg       Config
	dialer    *dialer
	transport *http.Transport
	client    *http.Client
	pools     pools
}

// readBufferSize is the read buffer of a connection. net/http's default
// of 4 KB reads a 40 KB page in ten system calls or more, each through
// the poller; 32 KB reads most pages in two, for 28 KB more on each
// connection (at most MaxIdleConns idle and one per worker busy).
const readBufferSize = 32 << 10

// New returns a Fetcher for cfg, or an error if cfg is invalid.
func New(cfg Config) (*Fetcher, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	d := newDialer(&cfg)
	t := &http.Transport{
		Proxy:                  nil, // never the environment's proxies: they would bypass the guard
		DialContext:            d.dial,
		DialTLSContext:         d.dialTLS, // does the handshake, bounded by TLSHandshakeTimeout
		ForceAttemptHTTP2:      true,
		DisableCompression:     true, // we ask for and decode codings ourselves, to archive the wire entity
		MaxConnsPerHost:        cfg.MaxConnsPerHost,
		MaxIdleConnsPerHost:    cfg.MaxConnsPerHost,
		MaxIdleConns:           cfg.MaxIdleConns,
		IdleConnTimeout:        cfg.IdleTimeout, // idleConn would end them then anyway
		ResponseHeaderTimeout:  cfg.ResponseHeaderTimeout,
		MaxResponseHeaderBytes: cfg.MaxHeaderBytes,
		ReadBufferSize:         readBufferSize,
	}
	return &Fetcher{
		cfg:       cfg,
		dialer:    d,
		transport: t,
		client: &http.Client{
			Transport: t,
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		},
	}, nil
}

// Decode undoes the Content-Encoding that header names (gzip, deflate,
// br, zstd) on body, as Get does for a response it reads, each layer's output
// capped at MaxBodyBytes: for a body read back from an archive, which
// holds it as it was sent. With no coding it returns body itself.
func (f *Fetcher) Decode(header http.Header, body []byte) ([]byte, error) {
	codings := contentEncodings(header.Values("Content-Encoding"))
	if len(codings) == 0 {
		return body, nil
	}
	return f.pools.decode(codings, body, f.cfg.MaxBodyBytes)
}

// Lookup returns the first address a request to host (a name or an IP
// literal, without port) would try: Config.Resolve, then the cached
// resolver, as the dialer does. The crawl groups hosts by it.
func (f *Fetcher) Lookup(ctx context.Context, host string) (netip.Addr, error) {
	ips, err := f.dialer.lookup(ctx, host)
	if err != nil {
		return netip.Addr{}, &Error{Kind: KindDNS, URL: host, Err: err}
	}
	if len(ips) == 0 {
		return netip.Addr{}, &Error{Kind: KindDNS, URL: host, Err: errors.New("no addresses")}
	}
	return ips[0], nil
}

// Permits checks host (a name or an IP literal, without port) against the
// SSRF guard before any request, as far as that can be done without DNS:
// an IP literal, or a name Config.Resolve pins, is judged by its address;
// another name passes here and is judged at connect time, address by
// address, like every request.
func (f *Fetcher) Permits(host string) error {
	ip, ok := f.dialer.resolve[normalizeHost(host)]
	if !ok {
		a, err := netip.ParseAddr(strings.Trim(host, "[]"))
		if err != nil {
			return nil
		}
		ip = a.Unmap()
	}
	network := "tcp4"
	if ip.Is6() {
		network = "tcp6"
	}
	if err := f.dialer.guard.check(network, netip.AddrPortFrom(ip, 80)); err != nil {
		return &Error{Kind: KindRefused, URL: host, Err: err}
	}
	return nil
}

// DNSStats returns how many host lookups the DNS cache answered, and how
// many it sent to the resolver (names Config.Resolve pins are neither).
func (f *Fetcher) DNSStats() (hits, misses int64) {
	return f.dialer.cache.hits.Load(), f.dialer.cache.misses.Load()
}

// Close closes idle connections. In-flight Gets are not interrupted; the
// Fetcher stays usable.
func (f *Fetcher) Close() {
	f.transport.CloseIdleConnections()
}

// Get fetches rawURL once, without following redirects. header adds to or
// replaces the default request headers (User-Agent, Accept,
// Accept-Encoding); the Host header is always taken from the URL.
//
// An error (always an *Error) means there is no response at all. Once
// response headers have arrived, Get returns the Response with a nil error
// even if the body could not be read whole: Truncated says why. The one
// exception is ctx ending mid-body, which returns a KindCanceled error, since
// the caller no longer wants the result.
func (f *Fetcher) Get(ctx context.Context, rawURL string, header http.Header) (*Response, error) {
	start := time.Now()
	if err := ctx.Err(); err != nil {
		return nil, &Error{Kind: KindCanceled, URL: rawURL, Err: err}
	}
	reqCtx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()

	// The connection the Transport hands over is recorded from here on
	// (wireConn) until the body has been read: GotConn comes before the
	// request is written, and a connection carries one exchange at a
	// time over HTTP/1.x.
	type got struct {
		addr string
		wc   *wireConn
		w    *wire
	}
	var conn atomic.Pointer[got]
	reqCtx = httptrace.WithClientTrace(reqCtx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			g := &got{addr: info.Conn.RemoteAddr().String()}
			if wc, ok := info.Conn.(*wireConn); ok {
				g.wc, g.w = wc, wc.begin()
			}
			conn.Store(g)
		},
	})
	req, err := f.newRequest(reqCtx, rawURL, header)
	if err != nil {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Err: err}
	}

	resp, err := f.client.Do(req)
	if err != nil {
		if g := conn.Load(); g != nil && g.wc != nil {
			g.wc.end(g.w)
		}
		return nil, classify(rawURL, err, ctx, reqCtx, f.cfg.Timeout, conn.Load() != nil)
	}
	if f.cfg.Cookies != nil {
		// Whatever the answer: a login's redirect sets the session the
		// next hop (a request of its own) sends back.
		if cs := resp.Cookies(); len(cs) > 0 {
			f.cfg.Cookies.SetCookies(req.URL, cs)
		}
	}
	limit := f.bodyLimit(resp)
	var body []byte
	var over bool
	var readErr error
	if limit > 0 {
		body, over, readErr = f.pools.readCapped(resp.Body, limit, resp.ContentLength)
	} else {
		over = true // refused: closing the body unread drops the connection
	}
	end := time.Now()
	g := conn.Load()
	var w *wire
	var state *tls.ConnectionState
	var certErr error
	if g != nil && g.wc != nil {
		w = g.wc.end(g.w) // before Close: a connection closed early is not read on
		state, certErr = g.wc.tls, g.wc.certErr
	}
	_ = resp.Body.Close() // closing early (over the cap) discards the connection, as it must

	r := &Response{
		URL:        rawURL,
		StatusCode: resp.StatusCode,
		Status:     resp.Status,
		Proto:      resp.Proto,
		Header:     resp.Header,
		Body:       body,
		Start:      start,
		Duration:   end.Sub(start),

		CertificateError: certErr,
	}
	if g != nil {
		r.RemoteAddr = g.addr
	}
	if err := r.setWire(w, state, req, resp, readErr == nil && !over); err != nil {
		return nil, &Error{Kind: KindProtocol, URL: rawURL, Err: err}
	}
	r.Refused = limit == 0
	switch {
	case over:
		r.Truncated = TruncatedLength
	case readErr != nil && ctx.Err() != nil:
		return nil, &Error{Kind: KindCanceled, URL: rawURL, Err: fmt.Errorf("reading body: %w", ctx.Err())}
	case readErr != nil && (reqCtx.Err() != nil || isTimeout(readErr)):
		r.Truncated = TruncatedTime
	case readErr != nil:
		r.Truncated = TruncatedDisconnect
	}
	if codings := contentEncodings(resp.Header.Values("Content-Encoding")); len(codings) > 0 {
		r.Decoded, r.DecodeErr = f.pools.decode(codings, body, max(limit, f.cfg.MaxBodyBytes))
		if r.DecodeErr != nil {
			r.DecodeErr = fmt.Errorf("fetch %s: %w", rawURL, r.DecodeErr)
		}
	} else {
		r.Decoded = body
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if loc := resp.Header.Get("Location"); loc != "" {
			if u, err := req.URL.Parse(loc); err == nil {
				r.Location = u.String()
			}
		}
	}
	return r, nil
}

// bodyLimit is the most body bytes to read of resp: Config.Bodies's
// answer for its media type, else MaxBodyBytes.
func (f *Fetcher) bodyLimit(resp *http.Response) int64 {
	if f.cfg.Bodies == nil {
		return f.cfg.MaxBodyBytes
	}
	mt, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	limit, ok := f.cfg.Bodies.BodyLimit(strings.ToLower(strings.TrimSpace(mt)))
	if !ok || limit < 0 {
		return f.cfg.MaxBodyBytes
	}
	return min(limit, math.MaxInt-1)
}

// newRequest builds the GET for rawURL with the default headers overlaid by
// header.
func (f *Fetcher) newRequest(ctx context.Context, rawURL string, header http.Header) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	// net/http sends a GET again, at once, when a reused connection dies
	// before the answer: a second request to the host that no politeness
	// clock saw. A body (empty: nothing is sent) makes the request not
	// replayable, so the failure is the crawler's to retry, after its gap.
	req.Body = noReplay{}
	// With a body of unknown length on a GET, net/http probes it for 200
	// ms and, on a machine too busy to run the probe in time, sends the
	// GET chunked (and the request archived ends in a chunk). "identity"
	// is its documented way to send the body as is: nothing, no probe.
	req.TransferEncoding = []string{"identity"}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return nil, fmt.Errorf("unsupported scheme %q", s)
	}
	if req.URL.Host == "" || req.URL.Hostname() == "" {
		return nil, errors.New("missing host")
	}
	var extra http.Header
	if f.cfg.Headers != nil {
		extra = f.cfg.Headers.HeaderFor(req.URL)
	}
	h := make(http.Header, 4+len(extra)+len(header))
	h["User-Agent"] = []string{f.cfg.UserAgent}
	h["Accept"] = []string{acceptValue}
	h["Accept-Encoding"] = []string{acceptEncodingValue}
	for _, over := range []http.Header{extra, header} {
		for k, vs := range over {
			if !httpguts.ValidHeaderFieldName(k) {
				return nil, fmt.Errorf("invalid header name %q", k)
			}
			for _, v := range vs {
				if !httpguts.ValidHeaderFieldValue(v) {
					// Not the value itself: it may be a secret.
					return nil, fmt.Errorf("invalid value for header %q", k)
				}
			}
			h[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
		}
	}
	// net/http's Client would add this header itself, unseen by
	// RequestHeader: add it here so that the record shows what is sent.
	if u := req.URL.User; u != nil && h.Get("Authorization") == "" {
		pw, _ := u.Password()
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	req.Header = h
	if f.cfg.Cookies != nil {
		// The jar's cookies are for this URL's host alone (RFC 6265
		// domain and path matching), so a redirect to another host, or
		// a requisite on a CDN, is sent none of them.
		for _, c := range f.cfg.Cookies.Cookies(req.URL) {
			req.AddCookie(c)
		}
	}
	return req, nil
}

// setWire sets the wire form of r: its header blocks and WireBody from
// what w recorded of the exchange (nil over h2, rendered from req and
// resp instead), and its protocol fields; state is the TLS connection w
// was recorded above, nil over plain TCP. whole says the body was read
// to its end.
func (r *Response) setWire(w *wire, state *tls.ConnectionState, req *http.Request, resp *http.Response, whole bool) error {
	r.req, r.resp = req, resp
	if resp.TLS != nil { // h2: net/http saw the TLS connection itself
		r.TLS, r.CipherSuite = tlsNames(resp.TLS)
	}
	if w == nil {
		r.Protocol = "h2"
		if resp.ProtoMajor == 1 {
			r.Protocol = strings.ToLower(resp.Proto)
		}
		r.RequestHeader, r.ResponseHeader = r.Rendered()
		return nil
	}
	r.Protocol = strings.ToLower(resp.Proto)
	if state != nil {
		r.TLS, r.CipherSuite = tlsNames(state)
	}
	if w.head == 0 {
		return errors.New("the response read has no header block")
	}
	r.RequestHeader = w.req
	r.ResponseHeader = w.resp[:w.head:w.head]
	if !w.copying {
		return nil // Body is the body as it came
	}
	raw := w.resp[w.head:]
	if len(resp.TransferEncoding) == 0 {
		// Named but not applied (an identity or an invalid coding
		// net/http let through): the body came as Body.
		if !bytes.HasPrefix(raw, r.Body) {
			return errors.New("the body read does not start as the body parsed")
		}
		return nil
	}
	r.WireBody = raw[:chunkedPrefix(raw, len(r.Body), whole)]
	return nil
}

// Rendered returns the request and the response header block as net/http
// parsed them, in HTTP/1.1 form, the fields in canonical case and sorted,
// with no Transfer-Encoding (Body is de-chunked): the form an h2 exchange
// is archived in, which has no such bytes, and one a caller may fall back
// to when the bytes that came are not a header block its archive format
// can hold.
func (r *Response) Rendered() (request, response []byte) {
	var b bytes.Buffer
	// A request that net/http has already written does not fail to write
	// again; were it to, the request line alone still says what was asked.
	if err := r.req.Write(&b); err != nil {
		b.Reset()
		fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", r.req.URL.RequestURI(), r.req.Host)
	}
	request = b.Bytes()
	var h bytes.Buffer
	h.Grow(256)
	h.WriteString("HTTP/1.1 ")
	h.WriteString(r.resp.Status)
	h.WriteString("\r\n")
	_ = r.resp.Header.Write(&h) // a bytes.Buffer does not fail
	h.WriteString("\r\n")
	return request, h.Bytes()
}

// tlsNames returns the WARC-Protocol name of a TLS connection's version
// and the IANA name of its cipher suite.
func tlsNames(s *tls.ConnectionState) (version, suite string) {
	switch s.Version {
	case tls.VersionTLS10:
		version = "tls/1.0"
	case tls.VersionTLS11:
		version = "tls/1.1"
	case tls.VersionTLS12:
		version = "tls/1.2"
	case tls.VersionTLS13:
		version = "tls/1.3"
	}
	return version, tls.CipherSuiteName(s.CipherSuite)
}

// noReplay is an empty request body; see newRequest. It is an
// io.WriterTo so that net/http's copy of it to the connection needs no
// buffer: io.Copy would allocate 32 KB for each request to copy nothing.
type noReplay struct{}

func (noReplay) Read([]byte) (int, error)         { return 0, io.EOF }
func (noReplay) Close() error                     { return nil }
func (noReplay) WriteTo(io.Writer) (int64, error) { return 0, nil }
