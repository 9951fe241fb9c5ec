package synthweb

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestLinger(t *testing.T) {
	t.Parallel()
	cfg := kindsConfig(HostileLinger)
	cfg.LingerFor = 300 * time.Millisecond
	cfg.HangLimit = 2 * time.Second
	w := startWeb(t, cfg)
	h := hostileHost(t, w, HostileLinger)
	c := newClient(t, w)

	resp, err := c.Get("http://" + h.Authority + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `href="/work/1"`) || !strings.Contains(string(b), `href="/work/2"`) {
		t.Fatalf("/: %d %q", resp.StatusCode, b)
	}

	if r := waitLog(t, w, func(r Request) bool { return r.Path == "/" && !r.End.IsZero() }); r.Abandoned {
		t.Errorf("log of /: %+v; the client read it whole, it was not abandoned", r)
	}

	// The client takes what comes and gives up; the handler goes on.
	resp, err = c.Get("http://" + h.Authority + "/work/1")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.ContentLength != LingerBodyBytes {
		t.Fatalf("/work/1: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
	first := make([]byte, LingerSentBytes)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatalf("reading the first %d bytes: %v", LingerSentBytes, err)
	}
	resp.Body.Close()
	gone := time.Now()
	r := waitLog(t, w, func(r Request) bool { return r.Path == "/work/1" && !r.End.IsZero() })
	if r.Status != 200 || r.Bytes != LingerSentBytes || !r.Abandoned || r.End.Sub(gone) < cfg.LingerFor || r.End.Sub(gone) > cfg.HangLimit {
		t.Errorf("log: %+v (client gone at %v); want the handler to end %v after the client left", r, gone, cfg.LingerFor)
	}

	// A client that never gives up is cut at HangLimit.
	resp, err = c.Get("http://" + h.Authority + "/work/2")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err = io.ReadAll(resp.Body)
	if err == nil || len(b) != LingerSentBytes {
		t.Errorf("read %d bytes, %v; want %d and the connection cut", len(b), err, LingerSentBytes)
	}
	wantNotFound(t, c, "http://"+h.Authority, "/robots.txt", "/work/3")
}
