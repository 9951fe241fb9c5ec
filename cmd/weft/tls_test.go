package main

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// docsSite is a small documentation site over HTTPS, its certificate
// issued by httptest's own authority, which no system root vouches for:
// a site behind a private CA. caFile is that authority's certificate in
// PEM.
func docsSite(t *testing.T) (srv *httptest.Server, caFile string) {
	t.Helper()
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			fmt.Fprint(w, `<html><body><a href="/guide.html">Guide</a></body></html>`)
		case "/guide.html":
			fmt.Fprint(w, `<html><body><h1>Guide</h1></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, caFile
}

// allWARC is the records of the WARC files under data, decompressed.
func allWARC(t *testing.T, data string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(data, "warc", "*.warc.gz"))
	var all bytes.Buffer
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(fh)
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

// A site behind a private CA: without help its certificate fails, and
// the summary says why once ("tls: fetch URL: certificate signed by
// unknown authority (TLS handshake with ...)"); --ca-file (given on the
// command line or as a profile key) trusts the CA; --insecure-tls
// archives the site all the same, every record saying the certificate
// failed.
func TestCAFileAndInsecureTLS(t *testing.T) {
	srv, caFile := docsSite(t)
	seed := srv.URL + "/"
	base := []string{"crawl", "--allow-cidr", "127.0.0.0/8", "--delay", "5ms", "--progress", "never", "--robots-attempts", "1", "--sitemaps=false"}
	crawl := func(extra ...string) (int, string, string, string) {
		t.Helper()
		data := t.TempDir()
		args := append(append(append([]string{}, base...), "--data", data), extra...)
		code, stdout, stderr := runWeft(t, append(args, seed)...)
		return code, stdout, stderr, data
	}

	code, stdout, stderr, _ := crawl()
	if code != 1 {
		t.Fatalf("without --ca-file: exit %d, want 1 (no seed fetched)\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	want := "tls: fetch " + srv.URL + "/robots.txt: certificate signed by unknown authority (TLS handshake with " + srv.Listener.Addr().String() + ")"
	if !strings.Contains(stdout, want) {
		t.Errorf("the summary does not say %q:\n%s", want, stdout)
	}
	for _, line := range strings.Split(stdout, "\n") {
		if strings.Count(line, "tls:") > 1 || strings.Count(line, "x509:") > 0 {
			t.Errorf("the summary repeats a prefix: %q", line)
		}
	}

	profile := writeFile(t, "docs.toml", fmt.Sprintf("ca-file = [%q]\n", caFile))
	for _, extra := range [][]string{{"--ca-file", caFile}, {"--config", profile}} {
		code, stdout, stderr, data := crawl(extra...)
		if code != 0 || !strings.Contains(stdout, "responses:  2xx 2,") {
			t.Fatalf("%v: exit %d\nstdout %s\nstderr %s", extra, code, stdout, stderr)
		}
		if w := allWARC(t, data); !strings.Contains(w, "Guide") || strings.Contains(w, "WARC-Certificate-Error") {
			t.Errorf("%v: the WARC files lack the guide, or say a trusted certificate failed", extra)
		}
	}

	code, stdout, stderr, data := crawl("--insecure-tls", "127.0.0.1")
	if code != 0 || !strings.Contains(stdout, "responses:  2xx 2,") {
		t.Fatalf("--insecure-tls: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	w := allWARC(t, data)
	marked := strings.Count(w, "\r\nWARC-Certificate-Error: x509: certificate signed by unknown authority\r\n")
	records := strings.Count(w, "\r\nWARC-Type: request\r\n") + strings.Count(w, "\r\nWARC-Type: response\r\n")
	if records < 6 || marked != records {
		t.Errorf("--insecure-tls: %d of %d request and response records (robots.txt, two pages, the favicon) say the certificate failed; want all", marked, records)
	}
}

// A --ca-file that cannot be used, or an --insecure-tls that is not a
// host, exits 2 naming the flag and the value.
func TestTLSFlagsBadInput(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key.pem")
	os.WriteFile(key, []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--ca-file", filepath.Join(dir, "none.pem")}, []string{"--ca-file", "none.pem", "no such file"}},
		{[]string{"--ca-file", key}, []string{"--ca-file", key, "PRIVATE KEY"}},
		{[]string{"--insecure-tls", "docs.test:443"}, []string{`--insecure-tls "docs.test:443"`, "port"}},
		{[]string{"--insecure-tls", "*docs.test"}, []string{`--insecure-tls "*docs.test"`, "wildcard"}},
	} {
		code, _, stderr := runWeft(t, append(append([]string{"crawl", "--data", dir}, tc.args...), "https://docs.test/")...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q does not name %q", tc.args, stderr, w)
			}
		}
	}
}
