package warc

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ia "github.com/internetarchive/gowarc"
	"github.com/klauspost/compress/gzip"
	nlnwa "github.com/nlnwa/gowarc/v3"
)

// htmlPage returns a deterministic synthetic HTML page of about size bytes:
// a head with scripts and styles, navigation lists, article paragraphs of
// Zipf-distributed words from a fixed vocabulary and a link-heavy footer.
// It compresses about like a real article page (gzip -6 about 4x); see
// BenchmarkCompressionLevel for the measured ratios.
func htmlPage(seed uint64, size int) []byte {
	vr := rand.New(rand.NewPCG(1, 2))
	vocab := make([]string, 3000)
	for i := range vocab {
		n := 2 + vr.IntN(6) + vr.IntN(5)
		b := make([]byte, n)
		for j := range b {
			b[j] = "etaoinshrdlcumwfgypbvkjxqz"[min(vr.IntN(26), vr.IntN(26))]
		}
		vocab[i] = string(b)
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	z := rand.NewZipf(r, 1.2, 3, uint64(len(vocab)-1))
	word := func() string { return vocab[z.Uint64()] }
	sections := []string{"news", "sport", "culture", "business", "opinion", "science", "travel", "weather"}

	var b bytes.Buffer
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s %s %s | Example News</title>\n", word(), word(), word())
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<link rel=\"stylesheet\" href=\"/static/css/site.min.css?v=20260301\">\n<script src=\"/static/js/vendor.min.js\" defer></script>\n")
	b.WriteString("<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag('js',new Date());gtag('config','G-XXXXXXX');</script>\n</head>\n<body class=\"article-page\">\n")
	b.WriteString("<header class=\"site-header\">\n<nav class=\"site-nav\" aria-label=\"Main\">\n<ul class=\"nav-list\">\n")
	for _, s := range sections {
		fmt.Fprintf(&b, "  <li class=\"nav-item\"><a class=\"nav-link\" href=\"https://www.example.com/%s/\">%s</a></li>\n", s, s)
	}
	b.WriteString("</ul>\n</nav>\n</header>\n<main id=\"content\" class=\"container\">\n<article class=\"article\">\n")
	for b.Len() < size-1200 {
		switch r.IntN(5) {
		case 0:
			s := sections[r.IntN(len(sections))]
			b.WriteString("<aside class=\"related\">\n<h3 class=\"related-title\">Related</h3>\n<ul class=\"related-list\">\n")
			for range 2 + r.IntN(4) {
				fmt.Fprintf(&b, "  <li class=\"related-item\"><a href=\"https://www.example.com/%s/2026/%02d/%s-%s-%s-%d\" class=\"related-link\" data-track=\"related\">%s %s %s</a></li>\n",
					s, 1+r.IntN(12), word(), word(), word(), r.IntN(1000000), word(), word(), word())
			}
			b.WriteString("</ul>\n</aside>\n")
		case 1:
			fmt.Fprintf(&b, "<figure class=\"image\"><img src=\"https://img.example.com/%d/%s.jpg\" alt=\"%s %s\" width=\"800\" height=\"450\" loading=\"lazy\"><figcaption>%s %s %s</figcaption></figure>\n",
				r.IntN(100000), word(), word(), word(), word(), word(), word())
		default:
			b.WriteString("<p class=\"article-text\">")
			for i := range 30 + r.IntN(60) {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(word())
			}
			b.WriteString(".</p>\n")
		}
	}
	b.WriteString("</article>\n</main>\n<footer class=\"site-footer\">\n<ul class=\"footer-links\">\n")
	for b.Len() < size-40 {
		s := sections[r.IntN(len(sections))]
		fmt.Fprintf(&b, "  <li><a href=\"https://www.example.com/%s/\">%s</a></li>\n", s, s)
	}
	b.WriteString("</ul>\n</footer>\n</body>\n</html>\n")
	return b.Bytes()
}

func gzipBytes(t testing.TB, p []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var testDate = time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.UTC)

// pageExchange returns an ordinary 200 exchange for url with body p.
func pageExchange(url string, i int, p []byte) Exchange {
	host := strings.SplitN(strings.TrimPrefix(url, "http://"), "/", 2)[0]
	return Exchange{
		URL:           url,
		Date:          testDate.Add(time.Duration(i) * 1234567 * time.Nanosecond),
		IP:            fmt.Sprintf("192.0.2.%d", 1+i%250),
		RequestHeader: []byte("GET /" + strings.SplitN(strings.TrimPrefix(url, "http://"), "/", 2)[1] + " HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: weft-test/1.0\r\nAccept-Encoding: gzip\r\n\r\n"),
		ResponseHeader: []byte(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n"+
			"Date: Sat, 14 Mar 2026 15:09:26 GMT\r\n\r\n", len(p))),
		Payload: p,
	}
}

// iaRecord is a record as read back by the internetarchive reader.
type iaRecord struct {
	Header  ia.Header
	Block   []byte
	Version string
	Offset  int64
	Size    int64
}

// readIA reads every record of a file with github.com/internetarchive/gowarc.
func readIA(t testing.TB, path string) []iaRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return readIAFrom(t, f, path)
}

func readIAFrom(t testing.TB, src io.Reader, name string) []iaRecord {
	t.Helper()
	r, err := ia.NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []iaRecord
	for {
		rec, err := r.ReadRecord()
		if err == io.EOF { // a wrapped EOF is a truncated record, not the end
			return recs
		}
		if err != nil {
			t.Fatalf("%s: internetarchive reader, record %d: %v", name, len(recs), err)
		}
		block, err := io.ReadAll(rec.Content)
		rec.Content.Close()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, iaRecord{Header: rec.Header, Block: block, Version: rec.Version, Offset: rec.Offset, Size: rec.Size})
	}
}

// readNlnwaStrict reads every record of a file with nlnwa's reader, failing
// on any syntax, spec or digest error, and on HTTP blocks that net/http
// cannot parse; it returns each response's payload as nlnwa exposes it,
// in order. nlnwa's reader options run
// uuid.EnableRandPool (see record.go), so never call it from parallel tests.
func readNlnwaStrict(t testing.TB, path string) (records int, payloads [][]byte) {
	t.Helper()
	return readNlnwa(t, path, nlnwa.WithStrictValidation(), nlnwa.WithBlockErrorPolicy(nlnwa.ErrFail))
}

func readNlnwa(t testing.TB, path string, opts ...nlnwa.WarcRecordOption) (records int, payloads [][]byte) {
	t.Helper()
	r, err := nlnwa.NewWarcFileReader(path, 0, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err == io.EOF { // a wrapped EOF is a truncated record, not the end
			return records, payloads
		}
		if err != nil {
			t.Fatalf("%s: nlnwa strict reader, record %d: %v", path, records, err)
		}
		if len(rec.Validation) > 0 {
			t.Fatalf("%s: nlnwa strict reader, record %d: %v", path, records, rec.Validation)
		}
		records++
		if rec.WarcRecord.Type() == nlnwa.Response {
			pb, ok := rec.WarcRecord.Block().(nlnwa.HttpResponseBlock)
			if !ok {
				t.Fatalf("%s: record %d: block is %T, not an HTTP response", path, records, rec.WarcRecord.Block())
			}
			pr, err := pb.PayloadBytes()
			if err != nil {
				t.Fatal(err)
			}
			p, err := io.ReadAll(pr)
			if err != nil {
				t.Fatal(err)
			}
			payloads = append(payloads, p)
		}
		rec.Close()
	}
}

// gzipMembers splits a file into its gzip members, checking each one's
// CRC and length, and returns their offsets, lengths and contents.
type member struct {
	Offset, Length int64
	Data           []byte
}

func gzipMembers(t testing.TB, path string) []member {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// bytes.Reader is an io.ByteReader, so the gzip reader reads no further
	// than the end of each member and br.Len() marks member boundaries.
	br := bytes.NewReader(raw)
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var ms []member
	var off int64
	for {
		zr.Multistream(false)
		data, err := io.ReadAll(zr) // checks CRC-32 and length
		if err != nil {
			t.Fatalf("%s: member %d: %v", path, len(ms), err)
		}
		end := int64(len(raw) - br.Len())
		ms = append(ms, member{Offset: off, Length: end - off, Data: data})
		off = end
		if err := zr.Reset(br); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: after member %d: %v", path, len(ms), err)
		}
	}
	if off != int64(len(raw)) {
		t.Fatalf("%s: members end at %d, file is %d bytes", path, off, len(raw))
	}
	return ms
}

// httpBody returns the entity body of a response block as net/http reads
// it (the way internetarchive's verifier does), and the read error.
func httpBody(t testing.TB, block []byte) ([]byte, error) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(block)), nil)
	if err != nil {
		t.Fatalf("http.ReadResponse: %v", err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Transfer-Encoding") != "" || len(resp.TransferEncoding) > 0 {
		t.Fatalf("block has a Transfer-Encoding")
	}
	return io.ReadAll(resp.Body)
}

// splitBlock splits an HTTP block at its first blank line.
func splitBlock(t testing.TB, block []byte) (header, payload []byte) {
	t.Helper()
	i := bytes.Index(block, []byte("\r\n\r\n"))
	if i < 0 {
		t.Fatalf("no end of HTTP header in block")
	}
	return block[:i+4], block[i+4:]
}

func sha1Base32(p []byte) string {
	s := sha1.Sum(p)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

// warcHeaderCount counts the fields called name in the WARC header of an
// uncompressed record (the IA reader's map would hide duplicates).
func warcHeaderCount(rec []byte, name string) int {
	end := bytes.Index(rec, []byte("\r\n\r\n"))
	n := 0
	for _, line := range strings.Split(string(rec[:end]), "\r\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, name) {
			n++
		}
	}
	return n
}

func listDir(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func mustClose(t testing.TB, w *Writer) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func paths(dir string, names []string) []string {
	var ps []string
	for _, n := range names {
		ps = append(ps, filepath.Join(dir, n))
	}
	return ps
}
