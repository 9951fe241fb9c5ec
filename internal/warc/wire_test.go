package warc

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestChunkedAsSent: a body given as it crossed the connection, chunked,
// is the block's body byte for byte after the header as sent; the block
// digest covers those bytes and the payload digest the de-chunked entity
// body (WARC 1.1 §5.9); ReadRecord gives the de-chunked payload and
// checks both; the protocol fields are written on both records.
func TestChunkedAsSent(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	payload := []byte("<p>hello, world</p>")
	ex := pageExchange("http://example.com/c.html", 1, payload)
	ex.ResponseHeader = []byte("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\nX-Dup: 1\r\nX-Dup: 2\r\nTransfer-Encoding: chunked\r\n\r\n")
	ex.WireBody = []byte("5;ext=1\r\n<p>he\r\n00E\r\nllo, world</p>\r\n0\r\nX-Trailer: t\r\n\r\n")
	ex.Protocols = []string{"http/1.1", "tls/1.3"}
	ex.CipherSuite = "TLS_AES_128_GCM_SHA256"
	loc, err := w.WriteExchange(ex)
	if err != nil {
		t.Fatal(err)
	}
	// The same payload unchunked, to be sure the digests differ by block
	// only.
	plain := pageExchange("http://example.com/p.html", 2, payload)
	if _, err := w.WriteExchange(plain); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	path := filepath.Join(dir, w.Files()[0])
	recs := readIA(t, path)
	resp := recs[2]
	if want := append(append([]byte{}, ex.ResponseHeader...), ex.WireBody...); !bytes.Equal(resp.Block, want) {
		t.Errorf("block\n%q\nwant\n%q", resp.Block, want)
	}
	if got := resp.Header.Get("WARC-Payload-Digest"); got != sha1Base32(payload) || got != recs[4].Header.Get("WARC-Payload-Digest") {
		t.Errorf("payload digest %s, want %s (the de-chunked body's)", got, sha1Base32(payload))
	}
	if got := resp.Header.Get("WARC-Block-Digest"); got != sha1Base32(resp.Block) {
		t.Errorf("block digest %s, want %s", got, sha1Base32(resp.Block))
	}
	ms := gzipMembers(t, path)
	for _, i := range []int{1, 2} {
		if n := warcHeaderCount(ms[i].Data, "WARC-Protocol"); n != 2 || recs[i].Header.Get("WARC-Cipher-Suite") != ex.CipherSuite {
			t.Errorf("record %d: %d WARC-Protocol fields, cipher suite %q", i, n, recs[i].Header.Get("WARC-Cipher-Suite"))
		}
	}
	s, err := ReadRecord(path, loc.Offset)
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Payload) != string(payload) || !bytes.Equal(s.ResponseHeader, ex.ResponseHeader) {
		t.Errorf("read back payload %q header %q", s.Payload, s.ResponseHeader)
	}
}

// TestReadRecordChecksDigests: ReadRecord checks the digests itself, so a
// record whose payload digest is not the de-chunked body's is refused.
func TestReadRecordChecksDigests(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ex := pageExchange("http://example.com/c.html", 1, []byte("hello"))
	ex.ResponseHeader = []byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
	ex.WireBody = []byte("5\r\nhellO\r\n0\r\n\r\n") // not the payload given
	loc, err := w.WriteExchange(ex)
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	if _, err := ReadRecord(filepath.Join(dir, w.Files()[0]), loc.Offset); err == nil || !strings.Contains(err.Error(), "payload") {
		t.Errorf("ReadRecord = %v, want a payload digest error", err)
	}
}

// TestCertificateError: an exchange whose certificate failed verification
// has WARC-Certificate-Error on its request and its response (or revisit)
// record, one line however the server's certificate names were made, cut
// at MaxCertificateError; the strict readers of both libraries accept
// the field, and an exchange without it has none.
func TestCertificateError(t *testing.T) {
	dir := t.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("<p>archived all the same</p>")
	ex := pageExchange("https://docs.example/", 1, body)
	ex.Protocols, ex.CipherSuite = []string{"http/1.1", "tls/1.3"}, "TLS_AES_128_GCM_SHA256"
	ex.CertificateError = "x509: certificate signed by unknown authority"
	loc, err := w.WriteExchange(ex)
	if err != nil {
		t.Fatal(err)
	}
	// A name mismatch lists the certificate's names: the server's to
	// choose, a line break among them, and hundreds of them.
	hostile := "x509: certificate is valid for evil.example\r\nWARC-Type: resource, " + strings.Repeat("a.example, ", 100) + "not docs.example"
	re := pageExchange("https://docs.example/again", 2, body)
	re.CertificateError = hostile
	re.Revisit = &Revisit{RefersToURI: ex.URL, RefersToDate: ex.Date, RefersTo: loc.RecordID}
	if _, err := w.WriteExchange(re); err != nil {
		t.Fatal(err)
	}
	plain := pageExchange("http://docs.example/plain", 3, body)
	if _, err := w.WriteExchange(plain); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)
	path := filepath.Join(dir, w.Files()[0])
	if n, _ := readNlnwaStrict(t, path); n != 7 {
		t.Fatalf("nlnwa's strict reader read %d records, want 7", n)
	}
	recs := readIA(t, path)
	ms := gzipMembers(t, path)
	for i, want := range map[int]string{1: ex.CertificateError, 2: ex.CertificateError} {
		if got := recs[i].Header.Get("WARC-Certificate-Error"); got != want || warcHeaderCount(ms[i].Data, "WARC-Certificate-Error") != 1 {
			t.Errorf("record %d (%s): WARC-Certificate-Error %q, want %q once", i, recs[i].Header.Get("WARC-Type"), got, want)
		}
	}
	for _, i := range []int{3, 4} {
		got := recs[i].Header.Get("WARC-Certificate-Error")
		if recs[i].Header.Get("WARC-Type") == "resource" || warcHeaderCount(ms[i].Data, "WARC-Type") != 1 {
			t.Errorf("record %d: the certificate's names made a field of their own", i)
		}
		if len(got) > MaxCertificateError || !strings.HasPrefix(got, "x509: certificate is valid for evil.example  WARC-Type: resource, a.example") || !strings.HasSuffix(got, "...") {
			t.Errorf("record %d (%s): WARC-Certificate-Error %q (%d bytes), want one line cut at %d", i, recs[i].Header.Get("WARC-Type"), got, len(got), MaxCertificateError)
		}
	}
	for _, i := range []int{5, 6} {
		if warcHeaderCount(ms[i].Data, "WARC-Certificate-Error") != 0 {
			t.Errorf("record %d: a certificate error on an exchange without one", i)
		}
	}
}
