package warc

import (
	"crypto/sha1"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadRecord feeds the reading path (ReadRecord, which weft get and
// the capture index use) arbitrary bytes at arbitrary offsets: a torn,
// corrupt or hostile WARC file is an error, never a panic or a hang; and a
// record read has the type it must.
func FuzzReadRecord(f *testing.F) {
	// A real file, and its record offsets, as seeds.
	dir := f.TempDir()
	w, err := NewWriter(Config{Dir: dir})
	if err != nil {
		f.Fatal(err)
	}
	ex := Exchange{URL: "http://example.com/a", Date: testDate, IP: "192.0.2.1",
		RequestHeader:  []byte("GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n"),
		ResponseHeader: []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"), Payload: []byte("<p>hello</p>")}
	loc, err := w.WriteExchange(ex)
	if err != nil {
		f.Fatal(err)
	}
	sum := sha1.Sum(ex.Payload)
	ex.Revisit = &Revisit{RefersToURI: ex.URL, RefersToDate: testDate, RefersTo: loc.RecordID}
	ex.PayloadSHA1 = &sum
	rloc, err := w.WriteExchange(ex)
	if err != nil {
		f.Fatal(err)
	}
	mustClose(f, w)
	data, err := os.ReadFile(filepath.Join(dir, loc.File))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, uint32(loc.Offset))
	f.Add(data, uint32(rloc.Offset))
	f.Add(data, uint32(0))
	f.Add(data[:len(data)/2], uint32(loc.Offset))
	f.Add([]byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n"), uint32(0))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}, uint32(0))
	tmp := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, offset uint32) {
		path := filepath.Join(tmp, "f.warc.gz")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := ReadRecord(path, int64(offset)%int64(len(data)+1))
		if err == nil && s.Type != "response" && s.Type != "revisit" {
			t.Fatalf("read a %q record", s.Type)
		}
	})
}
