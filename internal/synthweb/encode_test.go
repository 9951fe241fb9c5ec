package synthweb

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

func decodeAs(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	var err error
	switch coding {
	case "gzip":
		r, err = gzip.NewReader(bytes.NewReader(b))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(b))
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "zstd":
		var d *zstd.Decoder
		d, err = zstd.NewReader(bytes.NewReader(b), zstd.WithDecoderConcurrency(1))
		if err == nil {
			defer d.Close()
			r = d
		}
	}
	if err != nil {
		t.Fatalf("%s: %v", coding, err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", coding, err)
	}
	return out
}

// With Config.Encoding, every body a host writes whole comes in that
// coding, to a client that asked for none, and decodes to the ground
// truth; a HEAD has the same headers and no body.
func TestEncoding(t *testing.T) {
	for _, coding := range Encodings {
		t.Run(coding, func(t *testing.T) {
			w := startWeb(t, Config{Seed: 42, Hosts: 2, PagesPerHost: 20, RobotsKinds: []RobotsKind{RobotsRules}, Encoding: coding})
			c := newClient(t, w)
			home := w.Seeds()[0]
			robots := strings.TrimSuffix(home, "/") + "/robots.txt"
			for _, u := range []string{home, robots} {
				resp, err := c.Get(u)
				if err != nil {
					t.Fatal(err)
				}
				wire, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if got := resp.Header.Get("Content-Encoding"); resp.StatusCode != 200 || got != coding {
					t.Fatalf("%s: %d, Content-Encoding %q, want 200 and %q", u, resp.StatusCode, got, coding)
				}
				if body := decodeAs(t, coding, wire); !bytes.Equal(body, w.Body(u)) {
					t.Errorf("%s: decodes to %d bytes, not the page's %d", u, len(body), len(w.Body(u)))
				}
				if bytes.Equal(wire, w.Body(u)) {
					t.Errorf("%s: sent as is", u)
				}
				head, err := c.Head(u)
				if err != nil {
					t.Fatal(err)
				}
				head.Body.Close()
				if head.Header.Get("Content-Encoding") != coding || head.Header.Get("Content-Length") != resp.Header.Get("Content-Length") {
					t.Errorf("%s: HEAD headers %v", u, head.Header)
				}
			}
		})
	}
	if _, err := Start(Config{Seed: 1, Hosts: 1, Encoding: "compress"}); err == nil || !strings.Contains(err.Error(), `Encoding "compress"`) {
		t.Errorf("an unknown Encoding: %v", err)
	}
}

// The brotli and zstd bombs: "/" is a small body that decodes to
// spaces, at more than a hundred times its size (sampled: the first
// 4 MiB; their full size, BrotliBombBytes or ZstdBombBytes, is how they
// are made).
func TestBombs(t *testing.T) {
	w := startWeb(t, Config{Seed: 7, Hosts: 1, PagesPerHost: 12, HostileKinds: []string{BombBrotli, BombZstd}})
	c := newClient(t, w)
	for _, kind := range []string{BombBrotli, BombZstd} {
		h := hostileHost(t, w, kind)
		if r := get(t, c, "http://"+h.Authority+"/robots.txt"); r.status != 404 {
			t.Errorf("%s: robots.txt %d", kind, r.status)
		}
		resp, err := c.Get("http://" + h.Authority + "/")
		if err != nil {
			t.Fatal(err)
		}
		coding := map[string]string{BombBrotli: "br", BombZstd: "zstd"}[kind]
		if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != coding || resp.ContentLength <= 0 || resp.ContentLength > 256<<10 {
			t.Errorf("%s: %d, Content-Encoding %q, Content-Length %d; want a small %s body", kind, resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.ContentLength, coding)
		}
		cr := &countingReader{r: resp.Body}
		var zr io.Reader
		if coding == "br" {
			zr = brotli.NewReader(cr)
		} else {
			d, err := zstd.NewReader(cr, zstd.WithDecoderConcurrency(1))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			zr = d
		}
		const sample = 4 << 20
		got, err := io.ReadAll(io.LimitReader(zr, sample))
		resp.Body.Close()
		if err != nil || len(got) != sample || strings.Trim(string(got), " ") != "" {
			t.Fatalf("%s: decoded %d bytes (%v), want %d spaces", kind, len(got), err, sample)
		}
		if ratio := sample / float64(cr.n); ratio < 100 {
			t.Errorf("%s: %d bytes decoded from %d: not a bomb", kind, sample, cr.n)
		}
	}
}
