package synthweb

import (
	"compress/gzip"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// countingReader counts the wire bytes the gzip reader consumes.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func hostileConfig() Config {
	return Config{Seed: 7, Hosts: 2, PagesPerHost: 12, Hostile: true, HangLimit: 400 * time.Millisecond}
}

func hostileHost(t *testing.T, w *Web, name string) HostInfo {
	t.Helper()
	for _, h := range w.Hosts() {
		if h.Hostile == name {
			return h
		}
	}
	t.Fatalf("no %s host", name)
	return HostInfo{}
}

func TestGzipBomb(t *testing.T) {
	w := startWeb(t, hostileConfig())
	c := newClient(t, w)
	h := hostileHost(t, w, HostileGzipBomb)
	if r := get(t, c, "http://"+h.Authority+"/robots.txt"); r.status != 404 {
		t.Errorf("robots.txt: %d", r.status)
	}
	resp, err := c.Get("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Errorf("headers: %d %v", resp.StatusCode, resp.Header)
	}
	wire, _ := strconv.ParseInt(resp.Header.Get("Content-Length"), 10, 64)
	if wire <= 0 || wire > 4<<20 {
		t.Errorf("Content-Length %d, want a small body", wire)
	}
	cr := &countingReader{r: resp.Body}
	zr, err := gzip.NewReader(cr)
	if err != nil {
		t.Fatal(err)
	}
	const sample = 16 << 20
	n, err := io.Copy(io.Discard, io.LimitReader(zr, sample))
	if err != nil || n != sample {
		t.Fatalf("decompressed %d bytes: %v", n, err)
	}
	if ratio := float64(n) / float64(cr.n); ratio < 500 {
		t.Errorf("compression ratio %.0f, want a bomb (>500)", ratio)
	}
	// Projected to the whole body (roughly: the gzip reader reads ahead),
	// the bomb decompresses to ~1 GiB.
	if total := float64(wire) * float64(n) / float64(cr.n); total < 512<<20 {
		t.Errorf("projected decompressed size %.0f", total)
	}
	resp.Body.Close()
	r := waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && r.Path == "/" && !r.End.IsZero() })
	// The whole body fits in loopback socket buffers, so the handler may
	// have written all of it; it must just have finished.
	if r.Status != 200 || r.Bytes > wire {
		t.Errorf("log: %+v (wire %d)", r, wire)
	}
}

func TestEndless(t *testing.T) {
	w := startWeb(t, hostileConfig())
	c := newClient(t, w)
	h := hostileHost(t, w, HostileEndless)
	resp, err := c.Get("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.ContentLength != -1 {
		t.Errorf("status %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	const sample = 8 << 20
	if n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, sample)); n != sample {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	resp.Body.Close()
	r := waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && r.Path == "/" && !r.End.IsZero() })
	if r.Status != 200 || r.Bytes < sample {
		t.Errorf("log: %+v", r)
	}

	// A client still reading when the web closes is cut off promptly.
	resp, err = c.Get("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, resp.Body)
		done <- err
	}()
	waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && r.End.IsZero() })
	start := time.Now()
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("endless body ended cleanly")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("endless body still streaming after Close")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v", d)
	}
}

func TestSilent(t *testing.T) {
	w := startWeb(t, hostileConfig())
	h := hostileHost(t, w, HostileSilent)

	// Nothing comes back, whatever the client sends.
	conn, err := net.Dial("tcp", h.Addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(conn, "GET / HTTP/1.1\r\nHost: "+h.Authority+"\r\n\r\n")
	conn.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
	buf := make([]byte, 16)
	if n, err := conn.Read(buf); n != 0 || err == nil {
		t.Errorf("read %d bytes: %v", n, err)
	}
	// At HangLimit the server hangs up, still without a byte.
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	n, err := conn.Read(buf)
	if n != 0 || err != io.EOF {
		t.Errorf("after HangLimit: read %d bytes: %v", n, err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("hung up after %v more", d)
	}
	conn.Close()
	r := waitLog(t, w, func(r Request) bool { return r.Addr == h.Addr && !r.End.IsZero() })
	if r.Method != "" || r.Path != "" || r.Status != 0 || r.Bytes != 0 || r.End.Sub(r.Start) < 300*time.Millisecond {
		t.Errorf("log: %+v", r)
	}

	// A client that gives up ends the hold, and Close releases the rest.
	c := newClient(t, w)
	c.Timeout = 100 * time.Millisecond
	if resp, err := c.Get("http://" + h.Authority + "/"); err == nil {
		resp.Body.Close()
		t.Error("silent host answered")
	}
	// The client's connection is logged, and ended, before the next one
	// is made: the hold the wait below sees is the next one's.
	waitLogged(t, w, func(log []Request) bool { return len(log) == 2 && !log[1].End.IsZero() })
	held, err := net.Dial("tcp", h.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	waitLogged(t, w, func(log []Request) bool { return len(log) == 3 })
	start = time.Now()
	if err := w.Close(); err != nil {
		t.Error(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
	held.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := held.Read(buf); n != 0 || err != io.EOF {
		t.Errorf("after Close: read %d bytes: %v", n, err)
	}
	if got := len(w.Log()); got != 3 {
		t.Errorf("%d log entries, want 3 connections", got)
	}
}

// TestCopiesIsAnEndlessCalendar checks the near-duplicate trap: every day
// is the same story under its own heading, and links to later days.
func TestCopiesIsAnEndlessCalendar(t *testing.T) {
	t.Parallel()
	w := startWeb(t, hostileConfig())
	c := newClient(t, w)
	h := hostileHost(t, w, HostileCopies)
	base := "http://" + h.Authority
	day0, day5 := get(t, c, base+"/"), get(t, c, base+"/day/5")
	if day0.status != 200 || day5.status != 200 {
		t.Fatalf("status %d, %d", day0.status, day5.status)
	}
	for _, want := range []string{`href="/day/6"`, `href="/day/12"`, `href="/day/11"`, "<h1>Day 5</h1>"} {
		if !strings.Contains(string(day5.body), want) {
			t.Errorf("day 5 lacks %s", want)
		}
	}
	story := func(b []byte) string { s := string(b); return s[strings.Index(s, "<p>"):strings.Index(s, ".</p>")] }
	if story(day0.body) != story(day5.body) || len(story(day0.body)) < 1000 {
		t.Error("days 0 and 5 do not tell the same long story")
	}
	for _, p := range []string{"/day/x", "/other", "/day/-1"} {
		if r := get(t, c, base+p); r.status != 404 {
			t.Errorf("%s: %d, want 404", p, r.status)
		}
	}
}
