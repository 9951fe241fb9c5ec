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
	"encoding/base64"
	"errors"
	"fmt"
	"io"
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
	acceptValue         = "text/html,application/xhtml+xml,*/*;q=0.8"
	acceptEncodingValue = "gzip, deflate"
)

// Response is one HTTP exchange as it went over the wire.
type Response struct {
	URL        string // the URL requested
	StatusCode int
	Status     string // e.g. "200 OK"
	Proto      string // e.g. "HTTP/1.1"
	Header     http.Header

	// RequestHeader is the request as sent: request line, headers and the
	// blank line, for a WARC request record. Over HTTP/2 it is the same
	// request rendered in HTTP/1.1 form.
	RequestHeader []byte

	// ResponseHeader is the status line, headers and blank line,
	// reconstructed: net/http loses header order and case, and
	// Transfer-Encoding is left out because Body is de-chunked.
	ResponseHeader []byte

	// Body is the entity body as received: de-chunked, not content-decoded,
	// at most MaxBodyBytes.
	Body []byte

	// Decoded is Body with its Content-Encoding undone (gzip, deflate, br),
	// at most MaxBodyBytes; the same slice as Body when there is no coding.
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

	var remote atomic.Pointer[string]
	reqCtx = httptrace.WithClientTrace(reqCtx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			addr := info.Conn.RemoteAddr().String()
			remote.Store(&addr)
		},
	})
	req, err := f.newRequest(reqCtx, rawURL, header)
	if err != nil {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Err: err}
	}
	var reqHeader bytes.Buffer
	if err := req.Write(&reqHeader); err != nil {
		return nil, &Error{Kind: KindBadURL, URL: rawURL, Err: err}
	}

	resp, err := f.client.Do(req)
	if err != nil {
		return nil, classify(rawURL, err, ctx, reqCtx, remote.Load() != nil)
	}
	body, over, readErr := f.pools.readCapped(resp.Body, f.cfg.MaxBodyBytes, resp.ContentLength)
	end := time.Now()
	_ = resp.Body.Close() // closing early (over the cap) discards the connection, as it must

	r := &Response{
		URL:            rawURL,
		StatusCode:     resp.StatusCode,
		Status:         resp.Status,
		Proto:          resp.Proto,
		Header:         resp.Header,
		RequestHeader:  reqHeader.Bytes(),
		ResponseHeader: responseHeader(resp),
		Body:           body,
		Start:          start,
		Duration:       end.Sub(start),
	}
	if p := remote.Load(); p != nil {
		r.RemoteAddr = *p
	}
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
		r.Decoded, r.DecodeErr = f.pools.decode(codings, body, f.cfg.MaxBodyBytes)
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
	h := make(http.Header, 3+len(header))
	h["User-Agent"] = []string{f.cfg.UserAgent}
	h["Accept"] = []string{acceptValue}
	h["Accept-Encoding"] = []string{acceptEncodingValue}
	for k, vs := range header {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, fmt.Errorf("invalid header name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("invalid value %q for header %q", v, k)
			}
		}
		h[http.CanonicalHeaderKey(k)] = slices.Clone(vs)
	}
	// net/http's Client would add this header itself, unseen by
	// RequestHeader: add it here so that the record shows what is sent.
	if u := req.URL.User; u != nil && h.Get("Authorization") == "" {
		pw, _ := u.Password()
		h.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	req.Header = h
	return req, nil
}

// responseHeader renders the status line and headers of resp.
func responseHeader(resp *http.Response) []byte {
	var b bytes.Buffer
	b.Grow(256)
	b.WriteString(resp.Proto)
	b.WriteByte(' ')
	b.WriteString(resp.Status)
	b.WriteString("\r\n")
	_ = resp.Header.Write(&b) // a bytes.Buffer does not fail
	b.WriteString("\r\n")
	return b.Bytes()
}

// noReplay is an empty request body; see newRequest.
type noReplay struct{}

func (noReplay) Read([]byte) (int, error) { return 0, io.EOF }
func (noReplay) Close() error             { return nil }
