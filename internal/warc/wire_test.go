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
