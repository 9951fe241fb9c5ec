package fetch

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/publicsuffix"
)

// Bounds of a Jar, so that a crawl of a million hosts, or one host that
// sets a cookie on every answer, cannot grow it without end (memory is
// bounded by configuration, not by the crawl): a cookie larger than
// browsers keep (RFC 6265 §6.1 asks for at least 4096 bytes) is dropped,
// and a site's cookies, or all of them, past their budget.
const (
	MaxCookieBytes     = 4096     // one cookie's name and value
	MaxSiteCookieBytes = 64 << 10 // the cookies of one site (registrable domain)
	MaxJarBytes        = 16 << 20 // the cookies of all sites
)

// cookieOverhead is counted for each cookie beside its name, value,
// domain and path: the jar's entry and our key for it.
const cookieOverhead = 128

// Jar is a crawl's cookie jar: RFC 6265, with the public suffix list, so
// that a cookie goes back only to the hosts its domain covers, never to a
// whole public suffix (co.uk, github.io). Cookies servers set are kept
// within MaxCookieBytes, MaxSiteCookieBytes and MaxJarBytes; past them
// new ones are dropped (an update of one kept is taken). Cookies of a
// file (LoadFile) are kept whatever their size. It lives in memory only:
// a crawl resumed after a restart starts with the file's cookies alone.
// It is safe for concurrent use.
type Jar struct {
	jar *cookiejar.Jar

	mu    sync.Mutex
	kept  map[string]int // domain;path;name -> bytes counted for it
	sites map[string]int // site -> bytes counted for its cookies
	total int
}

// NewJar returns an empty jar.
func NewJar() *Jar {
	j, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List}) // it never fails
	return &Jar{jar: j, kept: map[string]int{}, sites: map[string]int{}}
}

// Cookies returns the cookies to send in a request for u.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie { return j.jar.Cookies(u) }

// SetCookies keeps the cookies of a response to u, within the jar's
// bounds.
func (j *Jar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	host := strings.ToLower(u.Hostname())
	site := siteOf(host)
	keep := make([]*http.Cookie, 0, len(cookies))
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range cookies {
		if len(c.Name)+len(c.Value) > MaxCookieBytes {
			continue
		}
		domain := strings.ToLower(strings.TrimPrefix(c.Domain, "."))
		if domain == "" {
			domain = host
		}
		key := domain + ";" + c.Path + ";" + c.Name
		old, had := j.kept[key]
		if c.MaxAge < 0 || (!c.Expires.IsZero() && c.Expires.Before(time.Now())) {
			// A deletion: always taken, and what it frees counted back.
			if had {
				delete(j.kept, key)
				j.sites[site] -= old
				j.total -= old
			}
			keep = append(keep, c)
			continue
		}
		size := len(key) + len(c.Value) + cookieOverhead
		if d := size - old; j.sites[site]+d > MaxSiteCookieBytes || j.total+d > MaxJarBytes {
			continue
		}
		j.kept[key] = size
		j.sites[site] += size - old
		j.total += size - old
		keep = append(keep, c)
	}
	if len(keep) > 0 {
		j.jar.SetCookies(u, keep)
	}
}

// siteOf is the registrable domain of host (eTLD+1), or host itself when
// it has none: an IP address, a single label, a public suffix.
func siteOf(host string) string {
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return host
	}
	site, err := publicsuffix.EffectiveTLDPlusOne(strings.TrimSuffix(host, "."))
	if err != nil {
		return host
	}
	return site
}

// Site is the registrable domain of host (eTLD+1, by the public suffix
// list), or host itself when it has none: an IP address, a name of one
// label (localhost), a public suffix. A host's site is what a cookie may
// at most be shared across.
func Site(host string) string { return siteOf(strings.ToLower(host)) }

// LoadFile adds the cookies of a Netscape cookies.txt file to the jar, the
// format curl, wget and browser extensions write, and returns how many it
// added (expired ones are left out). An error names the file and the line.
func (j *Jar) LoadFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("fetch: cookies file: %w", err)
	}
	defer f.Close()
	cookies, err := ParseCookies(path, f, time.Now())
	if err != nil {
		return 0, err
	}
	for _, fc := range cookies {
		j.jar.SetCookies(fc.URL, []*http.Cookie{fc.Cookie})
	}
	return len(cookies), nil
}

// FileCookie is one cookie of a cookies.txt file, and the URL it is set
// for: that of its domain, over https if it is Secure.
type FileCookie struct {
	URL    *url.URL
	Cookie *http.Cookie
}

// ParseCookies reads a Netscape cookies.txt file: a line per cookie of
// seven fields separated by tabs (domain, whether it goes to the
// domain's subdomains too, path, whether it is sent over https only,
// expiry in seconds since 1970 or 0 for a session cookie, name, value),
// lines starting with "#" comments except for "#HttpOnly_" before a
// domain, which marks an HttpOnly cookie (curl's way). Cookies expired by
// now are left out. Errors name the file (name) and the line, never a
// cookie's value.
func ParseCookies(name string, r io.Reader, now time.Time) ([]FileCookie, error) {
	var out []FileCookie
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSuffix(sc.Text(), "\r")
		if n == 1 {
			line = strings.TrimPrefix(line, "\ufeff") // a UTF-8 byte order mark
		}
		httpOnly := false
		if rest, ok := strings.CutPrefix(line, "#HttpOnly_"); ok {
			line, httpOnly = rest, true
		} else if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		fc, expired, err := parseCookieLine(line, httpOnly, now)
		if err != nil {
			return nil, fmt.Errorf("fetch: cookies file %s line %d: %w", name, n, err)
		}
		if !expired {
			out = append(out, fc)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fetch: cookies file %s line %d: %w", name, n+1, err)
	}
	return out, nil
}

// parseCookieLine reads one cookie line of a cookies.txt file.
func parseCookieLine(line string, httpOnly bool, now time.Time) (fc FileCookie, expired bool, err error) {
	f := strings.Split(line, "\t")
	if len(f) == 6 {
		f = append(f, "") // no value, as curl reads it
	}
	if len(f) != 7 {
		return fc, false, fmt.Errorf("%d tab-separated fields, want 7: domain, include subdomains, path, secure, expiry, name, value", len(f))
	}
	domain := strings.ToLower(strings.TrimSpace(f[0]))
	host := strings.TrimPrefix(domain, ".")
	if host == "" || strings.ContainsAny(host, " /:@?#*") && !strings.HasPrefix(host, "[") {
		return fc, false, fmt.Errorf("domain %q is not a host name", f[0])
	}
	sub, err := cookieBool(f[1])
	if err != nil {
		return fc, false, fmt.Errorf("include subdomains %q: want TRUE or FALSE", f[1])
	}
	path := f[2]
	if !strings.HasPrefix(path, "/") {
		return fc, false, fmt.Errorf("path %q: want a path starting with /", path)
	}
	secure, err := cookieBool(f[3])
	if err != nil {
		return fc, false, fmt.Errorf("secure %q: want TRUE or FALSE", f[3])
	}
	exp, err := strconv.ParseInt(strings.TrimSpace(f[4]), 10, 64)
	if err != nil || exp < 0 {
		return fc, false, fmt.Errorf("expiry %q: want seconds since 1970, or 0 for a session cookie", f[4])
	}
	c := &http.Cookie{Name: f[5], Value: f[6], Path: path, Secure: secure, HttpOnly: httpOnly}
	if sub {
		c.Domain = host
	}
	if exp > 0 {
		c.Expires = time.Unix(exp, 0)
		if !c.Expires.After(now) {
			return fc, true, nil
		}
	}
	if !httpguts.ValidHeaderFieldName(c.Name) {
		return fc, false, fmt.Errorf("name %q is not a cookie name (a token: no spaces, no separators)", c.Name)
	}
	if v, ok := strings.CutPrefix(c.Value, `"`); ok && len(v) > 0 && strings.HasSuffix(v, `"`) {
		c.Value, c.Quoted = v[:len(v)-1], true
	}
	if !validCookieValue(c.Value) {
		// The value is a secret: the error says what is wrong, not what
		// it is.
		return fc, false, fmt.Errorf("cookie %q: its value has a character a Cookie header cannot carry (a control character, a double quote, ; or \\, or a byte past ASCII)", c.Name)
	}
	scheme := "http"
	if secure {
		scheme = "https"
	}
	return FileCookie{URL: &url.URL{Scheme: scheme, Host: host, Path: path}, Cookie: c}, false, nil
}

// cookieBool reads a cookies.txt flag: TRUE or FALSE, in any case.
func cookieBool(s string) (bool, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "TRUE":
		return true, nil
	case "FALSE":
		return false, nil
	}
	return false, fmt.Errorf("not TRUE or FALSE")
}

// validCookieValue reports whether v can be a cookie's value as it is
// sent (RFC 6265 §4.1.1, with spaces and commas, which net/http allows
// and quotes): net/http would drop any other byte, and log it.
func validCookieValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if b := v[i]; b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return false
		}
	}
	return true
}
