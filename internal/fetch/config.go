package fetch

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Defaults applied by New to zero-valued Config fields.
const (
	DefaultConnectTimeout        = 10 * time.Second
	DefaultTLSHandshakeTimeout   = 10 * time.Second
	DefaultResponseHeaderTimeout = 15 * time.Second
	DefaultIdleTimeout           = 15 * time.Second
	DefaultTimeout               = 60 * time.Second
	DefaultMaxBodyBytes          = 10 << 20
	DefaultMaxHeaderBytes        = 1 << 20
	DefaultDNSCacheTTL           = 5 * time.Minute
	DefaultDNSNegativeTTL        = 30 * time.Second
	DefaultDNSMinTTL             = time.Minute
	DefaultDNSMaxTTL             = time.Hour
	DefaultMaxConnsPerHost       = 2
	DefaultMaxIdleConns          = 256
)

// A BodyPolicy decides, from a response's header, how much of its body to
// read.
type BodyPolicy interface {
	// BodyLimit returns the most body bytes to read of a response whose
	// Content-Type has the media type mediaType ("type/subtype", lower
	// case; "" when the header has none), and ok; or ok false to leave it
	// to MaxBodyBytes. A limit of 0 refuses the body: it is not read, and
	// the Response says so (Refused).
	BodyLimit(mediaType string) (limit int64, ok bool)
}

// Dialer makes TCP connections to IP:port addresses; *net.Dialer is one.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Resolver looks up the addresses of a host name. LookupNetIP is called with
// network "ip" and a host name that is never an IP literal; it must honour
// ctx and may return IPv4, IPv6 or IPv4-mapped IPv6 addresses in preference
// order. *net.Resolver satisfies it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Fetcher. Every zero value means the default named in
// its comment, except UserAgent, which is required.
type Config struct {
	// UserAgent is sent with every request. Required.
	UserAgent string

	// ConnectTimeout bounds one TCP connect attempt and one DNS lookup.
	// Zero means 10s.
	ConnectTimeout time.Duration

	// TLSHandshakeTimeout bounds the TLS handshake. Zero means 10s.
	TLSHandshakeTimeout time.Duration

	// ResponseHeaderTimeout bounds the time from the request being written
	// to the full response headers being read, so it also cuts servers that
	// drip their headers slowly. Zero means 15s.
	ResponseHeaderTimeout time.Duration

	// IdleTimeout is the longest silence allowed on a connection: between
	// two reads (headers and body alike), or from writing the request to
	// the first byte of the response. It also ends idle keep-alive
	// connections, which are therefore kept at most this long. Over HTTP/2
	// it applies to the connection, not to each stream. Zero means 15s.
	IdleTimeout time.Duration

	// Timeout is the total deadline of one Get, body included.
	// Zero means 60s.
	Timeout time.Duration

	// MaxBodyBytes caps both the bytes of body read from the wire and the
	// bytes produced by content decoding. Zero means 10 MiB.
	MaxBodyBytes int64

	// MaxHeaderBytes caps the response headers (Transport.MaxResponseHeaderBytes).
	// Zero means 1 MiB.
	MaxHeaderBytes int64

	// Resolve maps host names to IP literals and is consulted before DNS,
	// for any port (like curl --resolve). Names are matched as ResolveKey
	// writes them, so an internationalised name may be given in Unicode.
	// The SSRF guard still applies to the mapped address. Nil means no
	// overrides.
	Resolve map[string]string

	// AllowCIDRs lists prefixes that are allowed even though the SSRF guard
	// would refuse them (e.g. 127.0.0.0/8 in tests, or a known intranet).
	AllowCIDRs []netip.Prefix

	// DenyCIDRs lists prefixes that are refused even where AllowCIDRs or
	// the guard's own rules would allow them: a deny always wins, so an
	// operator can allow 10.0.0.0/8 but keep 10.0.0.0/24 out.
	DenyCIDRs []netip.Prefix

	// DNSCacheTTL is how long a successful lookup is reused when the
	// resolver does not give the answer's TTL (a Resolver that is not a
	// TTLResolver, a name of the hosts file). Zero means 5m.
	DNSCacheTTL time.Duration

	// DNSMinTTL and DNSMaxTTL bound how long an answer with a TTL is
	// reused: the floor keeps a name with a TTL of seconds from being
	// asked before every request, the ceiling bounds how long a site that
	// moved is fetched at its old address. Zero means 1m and 1h.
	DNSMinTTL, DNSMaxTTL time.Duration

	// DNSNegativeTTL is how long a failed lookup is reused. Zero means 30s.
	DNSNegativeTTL time.Duration

	// MaxConnsPerHost caps connections (dialing, active and idle) to one
	// scheme and host:port. Zero means 2.
	MaxConnsPerHost int

	// MaxIdleConns caps idle keep-alive connections across all hosts.
	// Zero means 256.
	MaxIdleConns int

	// Resolver resolves host names not found in Resolve. Nil means the
	// machine's name servers, asked directly so that answers' TTLs are
	// known (SystemDNSClient of /etc/resolv.conf and /etc/hosts), or
	// net.DefaultResolver where /etc/resolv.conf cannot be read.
	Resolver Resolver

	// Dialer, when set, makes the TCP connections in place of the
	// machine's network stack: an in-memory network, for tests that run on
	// fake time (package memnet). The address guard judges every address
	// before it is dialled, as it does as the socket's Control function
	// otherwise. Nil means the network.
	Dialer Dialer

	// TLSConfig is the base TLS client configuration, copied by New. Its
	// ServerName is set per connection, and an empty NextProtos becomes
	// http/1.1 (h2, http/1.1 with HTTP2). Nil means the defaults of
	// crypto/tls, with certificates verified against the system roots.
	TLSConfig *tls.Config

	// InsecureTLS names the hosts whose certificate is accepted even when
	// it fails verification (an unknown authority, another host's name,
	// expired), as wget's --no-check-certificate and Heritrix's "open"
	// trust level do for every host: a host name, "*." and a domain for
	// the hosts under it, an IP address, or "*" for all (InsecureTLSKey).
	// The certificate is verified all the same and the failure kept in
	// Response.CertificateError, for the archive to say so. Such a host is
	// spoken to in HTTP/1.1 even with HTTP2, so that the failure travels
	// with the connection's record. The address guard applies as to any
	// host. Nil, the default, accepts no certificate that fails.
	InsecureTLS []string

	// Bodies, if set, decides from each response's media type how much of
	// its body is read, in place of MaxBodyBytes (the decoded body too):
	// a cap per type, or none of it.
	Bodies BodyPolicy

	// Cookies, if set, is the crawl's cookie jar (a *Jar): its cookies for
	// a URL go with every request for it, in one Cookie field of the
	// request (so the request an archive records holds them), and the
	// Set-Cookie fields of every answer go into it, a redirect's too.
	// Nil sends no cookies and keeps none.
	Cookies http.CookieJar

	// Headers, if set, gives the header fields an operator asked to send
	// to each host, added to every request for it (a caller's header of
	// the same name wins). Nil adds none.
	Headers HeaderSource

	// HTTP2 offers HTTP/2 to TLS servers. Off by default: an HTTP/1.1
	// exchange is archived as the bytes that crossed the connection, an
	// h2 one only as the same message rendered in HTTP/1.1 form (its
	// frames and HPACK-coded fields are not a message a WARC reader
	// parses), as Heritrix and wget, which speak HTTP/1.1 alone, avoid.
	HTTP2 bool
}

// Validate reports the first invalid field, naming it and its value.
// Zero values are valid except for UserAgent.
func (c *Config) Validate() error {
	if c.UserAgent == "" {
		return fmt.Errorf("fetch: invalid Config.UserAgent %q: must not be empty", c.UserAgent)
	}
	if !httpguts.ValidHeaderFieldValue(c.UserAgent) {
		return fmt.Errorf("fetch: invalid Config.UserAgent %q: not a valid header value", c.UserAgent)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ConnectTimeout", c.ConnectTimeout},
		{"TLSHandshakeTimeout", c.TLSHandshakeTimeout},
		{"ResponseHeaderTimeout", c.ResponseHeaderTimeout},
		{"IdleTimeout", c.IdleTimeout},
		{"Timeout", c.Timeout},
		{"DNSCacheTTL", c.DNSCacheTTL},
		{"DNSNegativeTTL", c.DNSNegativeTTL},
		{"DNSMinTTL", c.DNSMinTTL},
		{"DNSMaxTTL", c.DNSMaxTTL},
	} {
		if d.v < 0 {
			return fmt.Errorf("fetch: invalid Config.%s %v: must not be negative", d.name, d.v)
		}
	}
	// MaxBodyBytes+1 must fit in an int: the reader asks for one byte more
	// than the cap to tell "exactly the cap" from "more than the cap".
	if c.MaxBodyBytes < 0 || c.MaxBodyBytes >= math.MaxInt {
		return fmt.Errorf("fetch: invalid Config.MaxBodyBytes %d: must be in [0, %d)", c.MaxBodyBytes, int64(math.MaxInt))
	}
	if lo, hi := orDefault(c.DNSMinTTL, DefaultDNSMinTTL), orDefault(c.DNSMaxTTL, DefaultDNSMaxTTL); lo > hi {
		return fmt.Errorf("fetch: invalid Config.DNSMinTTL %v: above Config.DNSMaxTTL %v", lo, hi)
	}
	if c.MaxHeaderBytes < 0 {
		return fmt.Errorf("fetch: invalid Config.MaxHeaderBytes %d: must not be negative", c.MaxHeaderBytes)
	}
	if c.MaxConnsPerHost < 0 {
		return fmt.Errorf("fetch: invalid Config.MaxConnsPerHost %d: must not be negative", c.MaxConnsPerHost)
	}
	if c.MaxIdleConns < 0 {
		return fmt.Errorf("fetch: invalid Config.MaxIdleConns %d: must not be negative", c.MaxIdleConns)
	}
	names := make(map[string]string, len(c.Resolve)) // ResolveKey -> the key it came from
	for host, ip := range c.Resolve {
		key, err := ResolveKey(host)
		if err != nil {
			return fmt.Errorf("fetch: invalid Config.Resolve key %q: %w", host, err)
		}
		addr, err := netip.ParseAddr(ip)
		if err != nil {
			return fmt.Errorf("fetch: invalid Config.Resolve[%q] %q: %w", host, ip, err)
		}
		if other, ok := names[key]; ok && netip.MustParseAddr(c.Resolve[other]).Unmap() != addr.Unmap() {
			return fmt.Errorf("fetch: invalid Config.Resolve: %q and %q are one host, %s, given different addresses", other, host, key)
		}
		names[key] = host
	}
	for i, h := range c.InsecureTLS {
		if _, err := InsecureTLSKey(h); err != nil {
			return fmt.Errorf("fetch: invalid Config.InsecureTLS[%d] %q: %w", i, h, err)
		}
	}
	for _, l := range []struct {
		name string
		ps   []netip.Prefix
	}{{"AllowCIDRs", c.AllowCIDRs}, {"DenyCIDRs", c.DenyCIDRs}} {
		for i, p := range l.ps {
			if !p.IsValid() {
				return fmt.Errorf("fetch: invalid Config.%s[%d] %v: not a valid prefix", l.name, i, p)
			}
			if p.Addr().Is4In6() && p.Bits() < 96 {
				// It would hold no IPv4-mapped address whole, and the
				// guard compares mapped addresses in their IPv4 form.
				return fmt.Errorf("fetch: invalid Config.%s[%d] %v: an IPv4-mapped prefix shorter than /96; write the IPv4 or IPv6 range itself", l.name, i, p)
			}
		}
	}
	return nil
}

// withDefaults returns a copy of c with every zero field set to its default
// and the maps and slices copied, so that later changes by the caller cannot
// reach a running Fetcher.
func (c Config) withDefaults() Config {
	setDur := func(d *time.Duration, def time.Duration) {
		if *d == 0 {
			*d = def
		}
	}
	setDur(&c.ConnectTimeout, DefaultConnectTimeout)
	setDur(&c.TLSHandshakeTimeout, DefaultTLSHandshakeTimeout)
	setDur(&c.ResponseHeaderTimeout, DefaultResponseHeaderTimeout)
	setDur(&c.IdleTimeout, DefaultIdleTimeout)
	setDur(&c.Timeout, DefaultTimeout)
	setDur(&c.DNSCacheTTL, DefaultDNSCacheTTL)
	setDur(&c.DNSNegativeTTL, DefaultDNSNegativeTTL)
	setDur(&c.DNSMinTTL, DefaultDNSMinTTL)
	setDur(&c.DNSMaxTTL, DefaultDNSMaxTTL)
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxHeaderBytes == 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if c.MaxConnsPerHost == 0 {
		c.MaxConnsPerHost = DefaultMaxConnsPerHost
	}
	if c.MaxIdleConns == 0 {
		c.MaxIdleConns = DefaultMaxIdleConns
	}
	if c.Resolve != nil {
		m := make(map[string]string, len(c.Resolve))
		for k, v := range c.Resolve {
			key, _ := ResolveKey(k) // checked by Validate
			m[key] = v
		}
		c.Resolve = m
	}
	c.InsecureTLS = append([]string(nil), c.InsecureTLS...)
	c.AllowCIDRs = append([]netip.Prefix(nil), c.AllowCIDRs...)
	c.DenyCIDRs = append([]netip.Prefix(nil), c.DenyCIDRs...)
	if c.TLSConfig != nil {
		c.TLSConfig = c.TLSConfig.Clone()
	}
	return c
}

// normalizeHost makes the key under which a host name is resolved and
// cached: DNS names are case-insensitive and "example.com." is the same
// name as "example.com".
func normalizeHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
