package fetch

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const secret = "s3cr3t-v4lue"

// cookieSite is a server for several host names at once: /login sets a
// session cookie and redirects, as a sign-in form's answer does; every
// request's Cookie and X-Token fields are kept by host.
type cookieSite struct {
	*httptest.Server
	mu      sync.Mutex
	cookies map[string][]string // host -> Cookie fields received
	tokens  map[string][]string // host -> X-Token fields received
}

func newCookieSite(t *testing.T) *cookieSite {
	s := &cookieSite{cookies: map[string][]string{}, tokens: map[string][]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := strings.Cut(r.Host, ":")
		s.mu.Lock()
		s.cookies[host] = append(s.cookies[host], r.Header.Get("Cookie"))
		s.tokens[host] = append(s.tokens[host], r.Header.Get("X-Token"))
		s.mu.Unlock()
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: secret, Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/private", http.StatusFound)
		case "/private":
			if c, err := r.Cookie("sid"); err != nil || c.Value != secret {
				http.Error(w, "sign in first", http.StatusForbidden)
				return
			}
			fmt.Fprint(w, "members only")
		default:
			fmt.Fprint(w, "public")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *cookieSite) url(host, path string) string {
	return "http://" + host + ":" + s.URL[strings.LastIndexByte(s.URL, ':')+1:] + path
}

func (s *cookieSite) last(host string) (cookie, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.cookies[host]); n > 0 {
		return s.cookies[host][n-1], s.tokens[host][n-1]
	}
	return "", ""
}

// hostHeaders gives X-Token to one host only, as a policy's headers are.
type hostHeaders map[string]http.Header

func (h hostHeaders) HeaderFor(u *url.URL) http.Header { return h[u.Hostname()] }

// TestCookiesAndHeadersStayWithTheirHost: a session cookie set by a
// redirect is sent back on the next request to its host, never to
// another loopback host, and an operator's header goes to its host alone.
// The request record (RequestHeader) holds the cookie, as it was sent.
func TestCookiesAndHeadersStayWithTheirHost(t *testing.T) {
	site := newCookieSite(t)
	cfg := testConfig()
	cfg.Resolve = map[string]string{"a.test": "127.0.0.1", "b.test": "127.0.0.1", "www.a.test": "127.0.0.1"}
	cfg.Cookies = NewJar()
	cfg.Headers = hostHeaders{"a.test": {"X-Token": {"tok-" + secret}}}
	f := newFetcher(t, cfg)

	if r := get(t, f, site.url("a.test", "/private")); r.StatusCode != http.StatusForbidden {
		t.Fatalf("before signing in: status %d, want 403", r.StatusCode)
	}
	if r := get(t, f, site.url("a.test", "/login")); r.StatusCode != http.StatusFound {
		t.Fatalf("login: status %d, want 302", r.StatusCode)
	}
	r := get(t, f, site.url("a.test", "/private"))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("after the login's redirect: status %d, want 200", r.StatusCode)
	}
	if !strings.Contains(string(r.RequestHeader), "Cookie: sid="+secret+"\r\n") {
		t.Errorf("the request as sent has no Cookie field:\n%s", r.RequestHeader)
	}
	if c, tok := site.last("a.test"); c != "sid="+secret || tok != "tok-"+secret {
		t.Errorf("a.test got Cookie %q, X-Token %q", c, tok)
	}
	for _, host := range []string{"b.test", "www.a.test", "127.0.0.1"} {
		if r := get(t, f, site.url(host, "/private")); r.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", host, r.StatusCode)
		}
		if c, tok := site.last(host); c != "" || tok != "" {
			t.Errorf("%s was sent Cookie %q, X-Token %q meant for a.test", host, c, tok)
		}
	}
}

// TestCookiesFile: a cookies.txt's domain cookie goes to its domain's
// hosts, a host-only one to its host, a secure one over https only, and
// none of them to another site.
func TestCookiesFile(t *testing.T) {
	site := newCookieSite(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "cookies.txt")
	future := time.Now().Add(time.Hour).Unix()
	text := "# Netscape HTTP Cookie File\n\n" +
		fmt.Sprintf(".a.test\tTRUE\t/\tFALSE\t%d\tsid\t%s\n", future, secret) +
		"#HttpOnly_b.test\tFALSE\t/\tFALSE\t0\tonly\tb\n" +
		"b.test\tFALSE\t/\tTRUE\t0\tsecure\tx\n" +
		"b.test\tFALSE\t/\tFALSE\t1\told\tgone\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	jar := NewJar()
	n, err := jar.LoadFile(file)
	if err != nil || n != 3 {
		t.Fatalf("LoadFile = %d, %v; want 3 cookies (one expired)", n, err)
	}
	cfg := testConfig()
	cfg.Resolve = map[string]string{"a.test": "127.0.0.1", "www.a.test": "127.0.0.1", "b.test": "127.0.0.1", "c.test": "127.0.0.1"}
	cfg.Cookies = jar
	f := newFetcher(t, cfg)
	for host, want := range map[string]string{"a.test": "sid=" + secret, "www.a.test": "sid=" + secret, "b.test": "only=b", "c.test": ""} {
		get(t, f, site.url(host, "/"))
		if c, _ := site.last(host); c != want {
			t.Errorf("%s was sent Cookie %q, want %q", host, c, want)
		}
	}
	if r := get(t, f, site.url("www.a.test", "/private")); r.StatusCode != http.StatusOK {
		t.Errorf("www.a.test/private with the file's cookie: status %d, want 200", r.StatusCode)
	}
}

func TestParseCookiesErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"a.test TRUE / FALSE 0 sid " + secret + "\n", "line 1: 1 tab-separated fields, want 7"},
		{"# c\na.test\tYES\t/\tFALSE\t0\tsid\t" + secret + "\n", "line 2: include subdomains \"YES\""},
		{"a.test\tTRUE\tpath\tFALSE\t0\tsid\t" + secret + "\n", "line 1: path \"path\""},
		{"a.test\tTRUE\t/\tFALSE\tsoon\tsid\t" + secret + "\n", "line 1: expiry \"soon\""},
		{"a.test\tTRUE\t/\tFALSE\t0\ts id\t" + secret + "\n", "line 1: name \"s id\""},
		{"a.test\tTRUE\t/\tFALSE\t0\tsid\t" + secret + ";x\n", "line 1: cookie \"sid\": its value has a character"},
		{"\tTRUE\t/\tFALSE\t0\tsid\t" + secret + "\n", "line 1: domain \"\""},
	} {
		_, err := ParseCookies("my.txt", strings.NewReader(tc.text), time.Now())
		if err == nil || !strings.Contains(err.Error(), "cookies file my.txt "+tc.want) {
			t.Errorf("%q: err = %v, want one with %q", tc.text, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: the error shows the cookie's value: %v", tc.text, err)
		}
	}
}

func TestParseCookiesFields(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	text := "\ufeff# Netscape HTTP Cookie File\r\n" +
		"#HttpOnly_.example.test\tTRUE\t/app\tTRUE\t1900000000\tsid\t\"quoted\"\r\n" +
		"example.test\tFALSE\t/\tFALSE\t0\tempty\t\r\n" +
		"example.test\tFALSE\t/\tFALSE\t0\tnovalue\r\n"
	got, err := ParseCookies("c.txt", strings.NewReader(text), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d cookies, want 3", len(got))
	}
	c := got[0].Cookie
	if got[0].URL.String() != "https://example.test/app" || c.Domain != "example.test" || c.Path != "/app" || !c.Secure || !c.HttpOnly ||
		c.Value != "quoted" || !c.Quoted || !c.Expires.Equal(time.Unix(1900000000, 0)) {
		t.Errorf("first cookie = %+v for %s", c, got[0].URL)
	}
	for _, fc := range got[1:] {
		if fc.Cookie.Domain != "" || fc.Cookie.Value != "" || !fc.Cookie.Expires.IsZero() || fc.URL.Scheme != "http" {
			t.Errorf("host-only session cookie = %+v for %s", fc.Cookie, fc.URL)
		}
	}
}

// TestJarBounds: a site that sets cookie after cookie is held to its
// budget, an update of a kept cookie is still taken, and a deletion
// frees its room.
func TestJarBounds(t *testing.T) {
	j := NewJar()
	u := &url.URL{Scheme: "http", Host: "a.test", Path: "/"}
	big := strings.Repeat("v", 1000)
	for i := range 200 {
		j.SetCookies(u, []*http.Cookie{{Name: fmt.Sprintf("c%d", i), Value: big}})
	}
	kept := len(j.Cookies(u))
	if kept == 0 || kept*(1000+cookieOverhead) > MaxSiteCookieBytes {
		t.Fatalf("%d cookies of 1000 bytes kept, want some within %d bytes", kept, MaxSiteCookieBytes)
	}
	j.SetCookies(u, []*http.Cookie{{Name: "c0", Value: "new"}})
	j.SetCookies(u, []*http.Cookie{{Name: "c1", MaxAge: -1}})
	j.SetCookies(u, []*http.Cookie{{Name: "later", Value: "ok"}})
	j.SetCookies(u, []*http.Cookie{{Name: "huge", Value: strings.Repeat("x", MaxCookieBytes)}})
	vals := map[string]string{}
	for _, c := range j.Cookies(u) {
		vals[c.Name] = c.Value
	}
	if vals["c0"] != "new" || vals["c1"] != "" || vals["later"] != "ok" || vals["huge"] != "" {
		t.Errorf("after an update, a deletion, a new small and a huge cookie: c0=%q c1=%q later=%q huge=%d bytes", vals["c0"], vals["c1"], vals["later"], len(vals["huge"]))
	}
	// Another site has its own budget.
	other := &url.URL{Scheme: "http", Host: "b.test", Path: "/"}
	j.SetCookies(other, []*http.Cookie{{Name: "c", Value: big}})
	if len(j.Cookies(other)) != 1 {
		t.Error("b.test's cookie was refused for a.test's use of its budget")
	}
}

func TestParseHeader(t *testing.T) {
	for in, want := range map[string]string{
		"X-Token: abc":           "X-Token=abc",
		"accept-language:  fr  ": "Accept-Language=fr",
		"X-Empty:":               "X-Empty=",
	} {
		n, v, err := ParseHeader(in)
		if err != nil || n+"="+v != want {
			t.Errorf("ParseHeader(%q) = %q, %q, %v; want %s", in, n, v, err, want)
		}
	}
	for in, want := range map[string]string{
		"no colon " + secret:      "want 'Name: value'",
		"Cookie: sid=" + secret:   `header "Cookie" cannot be set`,
		"Host: " + secret:         `header "Host" cannot be set`,
		"User-Agent: " + secret:   `header "User-Agent" cannot be set`,
		"Bad Name: " + secret:     `header "Bad Name": not a header name`,
		"X-A: " + secret + "\x01": `header "X-A": its value has a character`,
	} {
		_, _, err := ParseHeader(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHeader(%q) = %v, want an error with %q", in, err, want)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("ParseHeader(%q): the error shows the value: %v", in, err)
		}
	}
}
