package warc

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"
	"sync"

	nlnwa "github.com/nlnwa/gowarc/v3"
)

// Stored is one response or revisit record read back: what a lookup of a
// capture returns.
type Stored struct {
	Type           string // "response" or "revisit"
	TargetURI      string
	Date           string // WARC-Date as written
	PayloadDigest  string
	RefersToURI    string // of a revisit
	RefersToDate   string // of a revisit
	Truncated      string // WARC-Truncated: why the body is cut short ("length", "time", ...); "" if whole
	ResponseHeader []byte // the HTTP status line and header block
	Payload        []byte // the entity body, de-chunked; empty in a revisit
	// WireBody is the body as the record holds it, as it was sent, when
	// that is not Payload (chunked); nil otherwise.
	WireBody []byte
}

// Response parses ResponseHeader: the status and the header fields.
func (s Stored) Response() (int, http.Header, error) {
	r := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(bytes.Clone(s.ResponseHeader), "\r\n\r\n"...))))
	line, err := r.ReadLine()
	if err != nil {
		return 0, nil, fmt.Errorf("status line: %w", err)
	}
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "HTTP/") {
		return 0, nil, fmt.Errorf("status line %q", line)
	}
	status, err := strconv.Atoi(f[1])
	if err != nil || status < 100 || status > 999 {
		return 0, nil, fmt.Errorf("status line %q", line)
	}
	h, err := r.ReadMIMEHeader()
	if err != nil {
		return 0, nil, fmt.Errorf("header: %w", err)
	}
	return status, http.Header(h), nil
}

// ReadRecord reads the response or revisit record at offset in the WARC
// file at path (a Location's File, Offset), with github.com/nlnwa/gowarc,
// and checks its block and payload digests as it reads. A chunked body is
// de-chunked for Payload, and its payload digest checked over the
// de-chunked bytes, as WARC 1.1 defines it: gowarc hashes the raw bytes.
func ReadRecord(path string, offset int64) (Stored, error) {
	readers.Lock()
	r, err := nlnwa.NewWarcFileReader(path, offset, readOptions()...)
	readers.Unlock()
	if err != nil {
		return Stored{}, fmt.Errorf("warc: %w", err)
	}
	defer r.Close()
	return readOne(r, path, offset)
}

// ReadRecordFrom is ReadRecord for a record that starts where src does: a
// byte range of a WARC file held elsewhere (an object store). name and
// offset only label errors.
func ReadRecordFrom(src io.Reader, name string, offset int64) (Stored, error) {
	// Hidden behind a plain Reader: the library seeks a Seeker to the
	// offset, which src already starts at.
	readers.Lock()
	r, err := nlnwa.NewWarcFileReaderFromStream(struct{ io.Reader }{src}, 0, readOptions()...)
	readers.Unlock()
	if err != nil {
		return Stored{}, fmt.Errorf("warc: %w", err)
	}
	defer r.Close()
	return readOne(r, name, offset)
}

// readers makes one reader at a time: the library's constructor calls
// uuid.EnableRandPool, an unsynchronised write to a global of
// github.com/google/uuid (see record.go), and a browser's requests, or a
// replay's, read captures back in parallel. The reading itself runs
// unlocked.
var readers sync.Mutex

// readOptions make every finding an error, but spec violations, digests
// among them, only a warning, which readOne turns into an error unless it
// is the payload digest of a chunked body (see ReadRecord).
func readOptions() []nlnwa.WarcRecordOption {
	return []nlnwa.WarcRecordOption{
		nlnwa.WithSyntaxErrorPolicy(nlnwa.ErrFail), nlnwa.WithSpecViolationPolicy(nlnwa.ErrWarn),
		nlnwa.WithBlockErrorPolicy(nlnwa.ErrFail),
	}
}

func readOne(r *nlnwa.WarcFileReader, path string, offset int64) (Stored, error) {
	rec, err := r.Next()
	if errors.Is(err, io.EOF) {
		return Stored{}, fmt.Errorf("warc: %s at %d: no record", path, offset)
	}
	if err != nil {
		return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, err)
	}
	defer rec.Close()
	wr := rec.WarcRecord
	h := wr.WarcHeader()
	s := Stored{
		Type: wr.Type().String(), TargetURI: h.Get(nlnwa.WarcTargetURI), Date: h.Get(nlnwa.WarcDate),
		PayloadDigest: h.Get(nlnwa.WarcPayloadDigest),
		RefersToURI:   h.Get(nlnwa.WarcRefersToTargetURI), RefersToDate: h.Get(nlnwa.WarcRefersToDate),
		Truncated: h.Get(nlnwa.WarcTruncated),
	}
	if s.Type != "response" && s.Type != "revisit" {
		return Stored{}, fmt.Errorf("warc: %s at %d: a %s record, not a response or revisit", path, offset, s.Type)
	}
	b, ok := wr.Block().(nlnwa.ProtocolHeaderBlock)
	if !ok {
		return Stored{}, fmt.Errorf("warc: %s at %d: the %s of %s has no HTTP header block", path, offset, s.Type, s.TargetURI)
	}
	s.ResponseHeader = b.ProtocolHeaderBytes()
	chunked := hasField(s.ResponseHeader, "Transfer-Encoding")
	// Check the digests (and cache the block, which is then read).
	found, err := wr.ValidateDigest()
	if err != nil {
		return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, err)
	}
	for _, f := range append(found, rec.Validation...) {
		if !chunked || !strings.HasPrefix(f.Error(), "payload:") { // that one is checked below
			return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, f)
		}
	}
	var body []byte
	if pb, ok := wr.Block().(nlnwa.PayloadBlock); ok && s.Type == "response" {
		p, err := pb.PayloadBytes()
		if err != nil {
			return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, err)
		}
		if body, err = io.ReadAll(p); err != nil {
			return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, err)
		}
	} else if s.Type == "response" {
		return Stored{}, fmt.Errorf("warc: %s at %d: the block of %s is not an HTTP response", path, offset, s.TargetURI)
	}
	if s.Type == "revisit" {
		return s, nil // the payload is the capture it refers to
	}
	s.Payload = body
	if chunked {
		s.WireBody = body
		if s.Payload, err = dechunk(body, h.Get(nlnwa.WarcTruncated) != ""); err != nil {
			return Stored{}, fmt.Errorf("warc: %s at %d: body of %s: %w", path, offset, s.TargetURI, err)
		}
		if err := checkDigest(s.PayloadDigest, s.Payload); err != nil {
			return Stored{}, fmt.Errorf("warc: %s at %d: payload of %s: %w", path, offset, s.TargetURI, err)
		}
	}
	return s, nil
}

// checkDigest checks a WARC digest field ("sha1:" and base 32) against
// the bytes of parts; an empty field passes.
func checkDigest(field string, parts ...[]byte) error {
	if field == "" {
		return nil
	}
	algo, want, ok := strings.Cut(field, ":")
	if !ok || !strings.EqualFold(algo, "sha1") {
		return fmt.Errorf("digest %q: only sha1 is read", field)
	}
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	if got := base32.StdEncoding.EncodeToString(h.Sum(nil)); !strings.EqualFold(got, want) {
		return fmt.Errorf("digest is sha1:%s, the record says %s", got, field)
	}
	return nil
}

// dechunk removes the chunked transfer coding from a body; cut says the
// record is truncated, so the body may end inside a chunk.
func dechunk(body []byte, cut bool) ([]byte, error) {
	out, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(body)))
	if err != nil && !(cut && errors.Is(err, io.ErrUnexpectedEOF)) {
		return nil, fmt.Errorf("de-chunk: %w", err)
	}
	return out, nil
}
