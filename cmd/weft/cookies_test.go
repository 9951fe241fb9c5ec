package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The secrets a signed-in crawl is given or set: none may reach a log,
// the summary, the events or the fetch log.
const (
	fileSession  = "f1le-s3ss10n"  // --cookies
	loginSession = "l0g1n-s3ss10n" // set by the site's /login
	headerToken  = "h34d3r-t0k3n"  // --header
	policyToken  = "p0l1cy-t0k3n"  // the policy file's headers
)

// membersSite is a site on 127.0.0.1 whose /members/ pages need a session
// cookie, given in a cookies file or set by /login (which redirects to
// /members/); its pages link to, and embed an image of, other, a host on
// another loopback address. Each server keeps what it was asked and sent.
type membersSite struct {
	a, b *httptest.Server
	mu   sync.Mutex
	seen map[string][]string // "host path" -> the Cookie, X-Token and X-Site fields, and the status
}

func newMembersSite(t *testing.T) *membersSite {
	s := &membersSite{seen: map[string][]string{}}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("a second loopback address: %v", err)
	}
	s.b = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.note(r, http.StatusOK)
		fmt.Fprint(w, "<html><body>a third party</body></html>")
	}))
	s.b.Listener.Close()
	s.b.Listener = ln
	s.b.Start()
	t.Cleanup(s.b.Close)
	other := "http://other.test:" + port(s.b.URL)
	s.a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("sid")
		signedIn := c != nil && (c.Value == fileSession || c.Value == loginSession)
		status := http.StatusOK
		w.Header().Set("Content-Type", "text/html")
		switch {
		case r.URL.Path == "/robots.txt":
			status = http.StatusNotFound
			w.WriteHeader(status)
		case r.URL.Path == "/":
			fmt.Fprintf(w, `<html><body><a href="/login">sign in</a> <a href="/members/">members</a></body></html>`)
		case r.URL.Path == "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: loginSession, Path: "/", HttpOnly: true})
			status = http.StatusFound
			http.Redirect(w, r, "/members/", status)
		case !strings.HasPrefix(r.URL.Path, "/members/"):
			status = http.StatusNotFound
			w.WriteHeader(status)
		case !signedIn:
			status = http.StatusForbidden
			w.WriteHeader(status)
			fmt.Fprint(w, "<html><body>sign in first</body></html>")
		case r.URL.Path == "/members/":
			fmt.Fprintf(w, `<html><body><img src="%s/logo.png"><a href="/members/secret">the secret</a> <a href="%s/page">elsewhere</a> <a href="/members/out">out</a></body></html>`, other, other)
		case r.URL.Path == "/members/out":
			status = http.StatusFound
			http.Redirect(w, r, other+"/landing", status)
		default:
			fmt.Fprint(w, "<html><body>members only</body></html>")
		}
		s.note(r, status)
	}))
	t.Cleanup(s.a.Close)
	return s
}

func port(u string) string { return u[strings.LastIndexByte(u, ':')+1:] }

func (s *membersSite) note(r *http.Request, status int) {
	host, _, _ := strings.Cut(r.Host, ":")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen[host+" "+r.URL.Path] = append(s.seen[host+" "+r.URL.Path],
		fmt.Sprintf("cookie=%q token=%q site=%q status=%d", r.Header.Get("Cookie"), r.Header.Get("X-Token"), r.Header.Get("X-Site"), status))
}

func (s *membersSite) requests(host string) map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for k, v := range s.seen {
		if h, path, _ := strings.Cut(k, " "); h == host {
			out[path] = v
		}
	}
	return out
}

func (s *membersSite) reset() {
	s.mu.Lock()
	s.seen = map[string][]string{}
	s.mu.Unlock()
}

// crawl runs weft crawl of seed with extra flags, following links to
// any host (--scope any) so that the other host is asked for pages too,
// each run in a data
// directory of its own, and returns what it printed and wrote (stdout,
// stderr, --summary, --events, and every file of the data directory but
// the WARC files), and the WARC files' records, ungzipped.
func (s *membersSite) crawl(t *testing.T, seed string, extra ...string) (outputs map[string]string, warcs string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	args := append([]string{"crawl", "--data", data, "--delay", "1ms", "--allow-cidr", "127.0.0.0/8", "--log-level", "debug", "--scope", "any",
		"--resolve", "members.test=127.0.0.1", "--resolve", "other.test=127.0.0.2",
		"--summary", filepath.Join(dir, "summary.json"), "--events", filepath.Join(dir, "events.jsonl")}, extra...)
	code, stdout, stderr := runWeft(t, append(args, "http://members.test:"+port(s.a.URL)+seed)...)
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	outputs = map[string]string{"stdout": stdout, "stderr": stderr}
	var w strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".warc.gz") {
			zr, err := gzip.NewReader(bytes.NewReader(b))
			if err != nil {
				return err
			}
			u, err := io.ReadAll(zr)
			if err != nil {
				return err
			}
			w.Write(u)
			return nil
		}
		outputs[path] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return outputs, w.String()
}

// TestSignedInCrawl: a crawl given a cookies file, or one that signs in
// through the site's /login, reaches the members' pages, which one
// without a session does not; the session cookie and the operator's
// headers go to the site alone, never to the other loopback host its
// pages link to, embed and redirect to; and no secret is written anywhere
// but the WARC request records, which hold what was sent.
func TestSignedInCrawl(t *testing.T) {
	s := newMembersSite(t)
	dir := t.TempDir()
	cookies := filepath.Join(dir, "cookies.txt")
	os.WriteFile(cookies, []byte("# Netscape HTTP Cookie File\n#HttpOnly_members.test\tFALSE\t/\tFALSE\t0\tsid\t"+fileSession+"\n"), 0o600)
	policies := filepath.Join(dir, "policies.json")
	os.WriteFile(policies, []byte(`{"members.test": {"headers": {"X-Site": "`+policyToken+`"}}}`), 0o600)
	secretStatus := func() string {
		if r := s.requests("members.test")["/members/secret"]; len(r) > 0 {
			return r[len(r)-1]
		}
		return "not asked"
	}

	// Without a session: /members/ answers 403, and its pages are never
	// reached.
	s.crawl(t, "/members/")
	if got := secretStatus(); got != "not asked" {
		t.Fatalf("without a session, /members/secret: %s", got)
	}

	// With the cookies file, and headers for the site.
	s.reset()
	outputs, warcs := s.crawl(t, "/members/", "--cookies", cookies, "--header", "X-Token: "+headerToken, "--policy", policies)
	want := fmt.Sprintf("cookie=%q token=%q site=%q status=200", "sid="+fileSession, headerToken, policyToken)
	if got := secretStatus(); got != want {
		t.Errorf("with --cookies, /members/secret: %s, want %s", got, want)
	}
	s.checkOther(t)
	checkNoSecret(t, outputs, fileSession, headerToken, policyToken)
	if !strings.Contains(warcs, "Cookie: sid="+fileSession+"\r\n") || !strings.Contains(warcs, "X-Token: "+headerToken+"\r\n") {
		t.Error("the WARC request records do not hold the Cookie and X-Token fields sent")
	}

	// Signing in through the site: /login's Set-Cookie, on a redirect,
	// is sent from then on.
	s.reset()
	outputs, _ = s.crawl(t, "/")
	if got := secretStatus(); got != fmt.Sprintf("cookie=%q token=\"\" site=\"\" status=200", "sid="+loginSession) {
		t.Errorf("signed in through /login, /members/secret: %s", got)
	}
	s.checkOther(t)
	checkNoSecret(t, outputs, loginSession)
}

// checkOther checks that the other host was asked (a link, an image, a
// redirect's target) and sent no cookie nor header of the site's.
func (s *membersSite) checkOther(t *testing.T) {
	t.Helper()
	reqs := s.requests("other.test")
	for _, path := range []string{"/logo.png", "/page", "/landing"} {
		if len(reqs[path]) == 0 {
			t.Errorf("other.test was not asked for %s: %v", path, reqs)
		}
	}
	for path, rs := range reqs {
		for _, r := range rs {
			if r != `cookie="" token="" site="" status=200` {
				t.Errorf("other.test%s was sent the site's secrets: %s", path, r)
			}
		}
	}
}

func checkNoSecret(t *testing.T, outputs map[string]string, secrets ...string) {
	t.Helper()
	for name, text := range outputs {
		for _, sec := range secrets {
			if strings.Contains(text, sec) {
				t.Errorf("%s holds the secret %q", name, sec)
			}
		}
	}
	if len(outputs) < 5 {
		t.Errorf("only %d outputs read, want stdout, stderr, the summary, the events and the fetch log", len(outputs))
	}
}
