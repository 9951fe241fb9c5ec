package weft_test

import (
	"bytes"
	"context"
	"encoding/pem"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"

	"github.com/weft-crawler/weft"
)

// tlsSite is the shop over HTTPS, its certificate issued by httptest's
// own authority, which no system root vouches for.
func tlsSite(t *testing.T) *httptest.Server {
	t.Helper()
	plain := site()
	plain.Close()
	srv := httptest.NewUnstartedServer(plain.Config.Handler)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// warcText is every record of the WARC files of the crawl in dataDir,
// decompressed.
func warcText(t *testing.T, dataDir string, files []string) string {
	t.Helper()
	var all bytes.Buffer
	for _, f := range files {
		fh, err := os.Open(filepath.Join(dataDir, "warc", filepath.Base(f)))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(fh) // multistream: every member
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(&all, zr); err != nil {
			t.Fatal(err)
		}
		fh.Close()
	}
	return all.String()
}

// Config.CAFiles trusts a private authority, and Config.InsecureTLS
// archives a host whose certificate fails, each record saying why; bad
// values are refused naming the field.
func TestTLSTrust(t *testing.T) {
	srv := tlsSite(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		mod       func(*weft.Config)
		certError bool
	}{
		{"CAFiles", func(c *weft.Config) { c.CAFiles = []string{caFile} }, false},
		{"InsecureTLS", func(c *weft.Config) { c.InsecureTLS = []string{"127.0.0.1"} }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := config(srv, dir)
			c.mod(&cfg)
			cr, err := weft.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := cr.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if sum.Pages < 3 || sum.Errors["tls"] != 0 {
				t.Fatalf("%d pages, errors %v: want the shop's pages and no TLS error", sum.Pages, sum.Errors)
			}
			text := warcText(t, dir, sum.WARCFiles)
			n := strings.Count(text, "\r\nWARC-Certificate-Error: x509: certificate signed by unknown authority\r\n")
			records := strings.Count(text, "\r\nWARC-Type: request\r\n") + strings.Count(text, "\r\nWARC-Type: response\r\n") + strings.Count(text, "\r\nWARC-Type: revisit\r\n")
			if records == 0 || c.certError && n != records || !c.certError && n != 0 {
				t.Errorf("%d of %d request and response records say the certificate failed; want %v", n, records, c.certError)
			}
		})
	}

	for _, c := range []struct {
		mod  func(*weft.Config)
		want []string
	}{
		{func(c *weft.Config) { c.CAFiles = []string{filepath.Join(t.TempDir(), "none.pem")} }, []string{"CAFiles", "none.pem", "no such file"}},
		{func(c *weft.Config) { c.CAFiles = []string{srv.URL} }, []string{"CAFiles", srv.URL}},
		{func(c *weft.Config) { c.InsecureTLS = []string{"docs.test:443"} }, []string{`InsecureTLS[0] "docs.test:443"`, "port"}},
	} {
		cfg := config(srv, t.TempDir())
		c.mod(&cfg)
		_, err := weft.New(cfg)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("error %v, want one naming %q", err, w)
			}
		}
	}
}
