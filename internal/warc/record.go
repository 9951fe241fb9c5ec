package warc

// This file formats WARC records itself rather than with the record
// builder of github.com/nlnwa/gowarc/v3; the tests use that library's
// strict reader, which checks field syntax and both digests, on our files.
// The library gets in the way in three places:
//
//   - It cannot be used from concurrent fetch workers. Every
//     NewRecordBuilder call runs uuid.EnableRandPool(), an unsynchronised
//     write to a global in github.com/google/uuid, so two builders in
//     parallel, or one builder and any uuid.New elsewhere in the process,
//     are a data race that `go test -race` reports. A lock around building
//     would serialise the SHA-1 work too and still race with other uuid
//     users in the process.
//   - Its file writer rotates per record, so it can put a request and its
//     response in different files; it compresses on one goroutine per open
//     file; and it reports uncompressed sizes, not a record's gzip member.
//   - It is slow for this job: building and marshalling one 40 KB exchange
//     at the same gzip level costs 1.7 to 2.6 times the CPU of this code
//     (BenchmarkEncode: 215 to 340 µs, depending on how much garbage
//     collection runs alongside, against 125 µs; 747 allocations and
//     166 KB of garbage against 4 and 0.2 KB), because it copies each block
//     into a buffer, copies the payload again to cache it, and spills
//     blocks over 1 MiB to temporary files.
//
// What it computes is right for our records: with no Transfer-Encoding in
// the HTTP header its payload digest is the SHA-1 of the stored body, as
// ours is (TestNlnwaDigests). Its builder adds no Content-Type of its own;
// its file writer's warcinfo does, so a warcinfo function that sets one
// too writes a duplicate that its strict reader rejects. A WARC header is
// a dozen "Name: value" lines; the tests check ours with both libraries'
// readers.

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

const (
	warcVersion = "WARC/1.1\r\n"
	crlf        = "\r\n"
	endOfRecord = "\r\n\r\n"
	conformsTo  = "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"

	// dateLayout is W3C-DTF with microseconds: WARC/1.1 allows fractions
	// and microseconds are what warcio and pywb read back exactly.
	dateLayout = "2006-01-02T15:04:05.000000Z"

	contentTypeRequest  = "application/http;msgtype=request"
	contentTypeResponse = "application/http;msgtype=response"
	contentTypeWarcinfo = "application/warc-fields"

	// maxPooledBuffer bounds the output buffer of an encoder kept for
	// reuse, so one huge page does not pin its compressed size in memory
	// for good.
	maxPooledBuffer = 1 << 20

	// maxKeptEncoders bounds the encoders a Writer keeps for reuse: each
	// is a gzip compressor of a few hundred KB (its window and match
	// tables) and its output buffer. Records are compressed by as many
	// goroutines at once as there are CPUs running them, give or take a
	// preempted one; more encoders are made when more write at once, and
	// dropped after.
	maxKeptEncoders = 16
)

// encoder turns records into gzip members. It is not safe for concurrent
// use; the Writer keeps a pool of them.
type encoder struct {
	gz  *gzip.Writer
	sha hash.Hash
	hdr []byte       // WARC header being built
	blk []byte       // metadata block being built
	out bytes.Buffer // finished gzip members
}

func newEncoder(level int) (*encoder, error) {
	gz, err := gzip.NewWriterLevel(nil, level)
	if err != nil {
		return nil, fmt.Errorf("warc: gzip level %d: %w", level, err)
	}
	return &encoder{gz: gz, sha: sha1.New(), hdr: make([]byte, 0, 1024)}, nil
}

// member appends one gzip member holding one record, the header in e.hdr
// followed by block (the concatenation of parts), to e.out.
func (e *encoder) member(parts ...[]byte) error {
	e.gz.Reset(&e.out)
	if _, err := e.gz.Write(e.hdr); err != nil {
		return err
	}
	for _, p := range parts {
		if _, err := e.gz.Write(p); err != nil {
			return err
		}
	}
	if _, err := e.gz.Write([]byte(endOfRecord)); err != nil {
		return err
	}
	return e.gz.Close()
}

// exchange appends the request record and then the response record of ex
// to e.out, each as its own gzip member, and returns the length of the
// request member. ex must have passed checkExchange.
func (e *encoder) exchange(ex *Exchange) (reqLen int, respID [16]byte, err error) {
	var ids [2][16]byte
	newUUIDs(ids[:])
	reqID := ids[0]
	respID = ids[1]
	date := ex.Date.UTC()

	// The block digest covers the HTTP header block and the payload; the
	// payload digest only the de-chunked entity body, as WARC 1.1 means it.
	// A revisit record's block is the header block alone.
	var blockSum, payloadSum [sha1.Size]byte
	block := ex.Payload
	if ex.WireBody != nil {
		block = ex.WireBody
	}
	if ex.Revisit != nil {
		block = nil
	}
	e.sha.Reset()
	e.sha.Write(ex.ResponseHeader)
	e.sha.Write(block)
	e.sha.Sum(blockSum[:0])
	if ex.PayloadSHA1 != nil {
		payloadSum = *ex.PayloadSHA1
	} else {
		payloadSum = sha1.Sum(ex.Payload)
	}

	var reqSum [sha1.Size]byte
	e.sha.Reset()
	e.sha.Write(ex.RequestHeader)
	e.sha.Sum(reqSum[:0])

	h := append(e.hdr[:0], warcVersion...)
	h = appendField(h, "WARC-Type", "request")
	h = appendIDField(h, "WARC-Record-ID", reqID)
	h = appendDateField(h, "WARC-Date", date)
	h = appendField(h, "WARC-Target-URI", ex.URL)
	if ex.IP != "" {
		h = appendField(h, "WARC-IP-Address", ex.IP)
	}
	h = appendIDField(h, "WARC-Concurrent-To", respID)
	h = appendProtocolFields(h, ex)
	h = appendDigestField(h, "WARC-Block-Digest", reqSum)
	h = appendField(h, "Content-Type", contentTypeRequest)
	h = appendLengthField(h, len(ex.RequestHeader))
	e.hdr = append(h, crlf...)
	if err := e.member(ex.RequestHeader); err != nil {
		return 0, respID, err
	}
	reqLen = e.out.Len()

	h = append(e.hdr[:0], warcVersion...)
	if ex.Revisit != nil {
		h = appendField(h, "WARC-Type", "revisit")
	} else {
		h = appendField(h, "WARC-Type", "response")
	}
	h = appendIDField(h, "WARC-Record-ID", respID)
	h = appendDateField(h, "WARC-Date", date)
	h = appendField(h, "WARC-Target-URI", ex.URL)
	if ex.IP != "" {
		h = appendField(h, "WARC-IP-Address", ex.IP)
	}
	if r := ex.Revisit; r != nil {
		h = appendField(h, "WARC-Profile", cmp.Or(r.Profile, ProfileIdenticalPayload))
		if r.RefersTo != "" {
			h = appendField(h, "WARC-Refers-To", r.RefersTo)
		}
		h = appendField(h, "WARC-Refers-To-Target-URI", r.RefersToURI)
		h = appendDateField(h, "WARC-Refers-To-Date", r.RefersToDate.UTC())
	}
	h = appendProtocolFields(h, ex)
	h = appendDigestField(h, "WARC-Block-Digest", blockSum)
	h = appendDigestField(h, "WARC-Payload-Digest", payloadSum)
	if ex.Truncated != "" && ex.Revisit == nil {
		h = appendField(h, "WARC-Truncated", ex.Truncated)
	}
	h = appendField(h, "Content-Type", contentTypeResponse)
	h = appendLengthField(h, len(ex.ResponseHeader)+len(block))
	e.hdr = append(h, crlf...)
	if err := e.member(ex.ResponseHeader, block); err != nil {
		return 0, respID, err
	}
	return reqLen, respID, nil
}

// warcinfo appends a warcinfo record for the file named name to e.out. Its
// fields are WARC 1.1's (section 6.2), in the order Heritrix writes them.
func (e *encoder) warcinfo(cfg *Config, name string, date time.Time) error {
	var block []byte
	block = appendField(block, "software", cfg.Software)
	if cfg.Hostname != "" {
		block = appendField(block, "hostname", cfg.Hostname)
	}
	block = appendField(block, "format", "WARC File Format 1.1")
	block = appendField(block, "conformsTo", conformsTo)
	if cfg.Operator != "" {
		block = appendField(block, "operator", cfg.Operator)
	}
	block = appendField(block, "isPartOf", cfg.Prefix)
	if cfg.Robots != "" {
		block = appendField(block, "robots", cfg.Robots)
	}
	if cfg.UserAgent != "" {
		block = appendField(block, "http-header-user-agent", cfg.UserAgent)
	}

	var id [1][16]byte
	newUUIDs(id[:])
	h := append(e.hdr[:0], warcVersion...)
	h = appendField(h, "WARC-Type", "warcinfo")
	h = appendIDField(h, "WARC-Record-ID", id[0])
	h = appendDateField(h, "WARC-Date", date.UTC())
	h = appendField(h, "WARC-Filename", name)
	h = appendDigestField(h, "WARC-Block-Digest", sha1.Sum(block))
	h = appendField(h, "Content-Type", contentTypeWarcinfo)
	h = appendLengthField(h, len(block))
	e.hdr = append(h, crlf...)
	return e.member(block)
}

func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, crlf...)
}

// appendProtocolFields appends ex's WARC-Protocol fields, one per value,
// its WARC-Cipher-Suite and its WARC-Certificate-Error.
func appendProtocolFields(b []byte, ex *Exchange) []byte {
	for _, p := range ex.Protocols {
		b = appendField(b, "WARC-Protocol", p)
	}
	if ex.CipherSuite != "" {
		b = appendField(b, "WARC-Cipher-Suite", ex.CipherSuite)
	}
	if ex.CertificateError != "" {
		b = appendField(b, "WARC-Certificate-Error", fieldText(ex.CertificateError, MaxCertificateError))
	}
	return b
}

// fieldText makes s a field value: control characters (a certificate's
// names are the server's to choose, line breaks included) become spaces,
// invalid UTF-8 is replaced, and a text longer than max bytes is cut at a
// character boundary and ends in "...".
func fieldText(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	cut := max - len("...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func appendLengthField(b []byte, n int) []byte {
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, crlf...)
}

func appendDateField(b []byte, name string, t time.Time) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = t.AppendFormat(b, dateLayout)
	return append(b, crlf...)
}

// appendDigestField writes "sha1:" and the base32 of sum, the form the
// WARC 1.1 spec recommends and both Go WARC libraries produce.
func appendDigestField(b []byte, name string, sum [sha1.Size]byte) []byte {
	var enc [32]byte // base32 of 20 bytes is exactly 32 characters, no padding
	base32.StdEncoding.Encode(enc[:], sum[:])
	b = append(b, name...)
	b = append(b, ": sha1:"...)
	b = append(b, enc[:]...)
	return append(b, crlf...)
}

// appendIDField writes <urn:uuid:...> for a version 4 UUID.
func appendIDField(b []byte, name string, u [16]byte) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = appendID(b, u)
	return append(b, "\r\n"...)
}

// appendID appends u as a record ID: "<urn:uuid:...>".
func appendID(b []byte, u [16]byte) []byte {
	var s [36]byte
	hex.Encode(s[0:8], u[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], u[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], u[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], u[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], u[10:16])
	b = append(b, "<urn:uuid:"...)
	b = append(b, s[:]...)
	return append(b, '>')
}

// metadata appends a metadata record about m.URL, concurrent to the record
// m.ConcurrentTo names, holding m.Fields as application/warc-fields. m must
// have passed checkMetadata.
func (e *encoder) metadata(m *Metadata) error {
	// The block is built in the encoder's buffer: grown from nothing, an
	// outlinks record of 100 URLs took about eight allocations.
	block := e.blk[:0]
	for _, f := range m.Fields {
		block = appendField(block, f[0], f[1])
	}
	if cap(block) <= maxPooledBuffer {
		e.blk = block
	}
	var id [1][16]byte
	newUUIDs(id[:])
	h := append(e.hdr[:0], warcVersion...)
	h = appendField(h, "WARC-Type", "metadata")
	h = appendIDField(h, "WARC-Record-ID", id[0])
	h = appendDateField(h, "WARC-Date", m.Date.UTC())
	h = appendField(h, "WARC-Target-URI", m.URL)
	if m.ConcurrentTo != "" {
		h = appendField(h, "WARC-Concurrent-To", m.ConcurrentTo)
	}
	h = appendDigestField(h, "WARC-Block-Digest", sha1.Sum(block))
	h = appendField(h, "Content-Type", contentTypeWarcinfo)
	h = appendLengthField(h, len(block))
	e.hdr = append(h, crlf...)
	return e.member(block)
}

// checkMetadata rejects a metadata record that would be invalid.
func checkMetadata(m *Metadata) error {
	if m.URL == "" || !hasScheme(m.URL) || strings.ContainsAny(m.URL, " \t\r\n") {
		return fmt.Errorf("warc: metadata for %q: URL is not absolute", m.URL)
	}
	if m.Date.IsZero() {
		return fmt.Errorf("warc: metadata for %s: Date is zero", m.URL)
	}
	if c := m.ConcurrentTo; c != "" && (!strings.HasPrefix(c, "<") || !strings.HasSuffix(c, ">") || strings.ContainsAny(c, " \t\r\n")) {
		return fmt.Errorf("warc: metadata for %s: ConcurrentTo %q is not a record ID", m.URL, c)
	}
	for _, f := range m.Fields {
		if f[0] == "" || strings.ContainsAny(f[0], ": \t\r\n") || strings.ContainsAny(f[1], "\r\n") {
			return fmt.Errorf("warc: metadata for %s: field %q: %q cannot be written on one line", m.URL, f[0], f[1])
		}
	}
	return nil
}

// newUUIDs fills ids with random (version 4) UUIDs. It reads crypto/rand
// directly rather than through github.com/google/uuid, whose pool switch is
// an unsynchronised global.
func newUUIDs(ids [][16]byte) {
	for i := range ids {
		rand.Read(ids[i][:]) // never fails: crypto/rand.Read crashes the program instead
		ids[i][6] = ids[i][6]&0x0f | 0x40
		ids[i][8] = ids[i][8]&0x3f | 0x80
	}
}

// CheckExchange reports whether WriteExchange would refuse ex, and why.
func CheckExchange(ex *Exchange) error { return checkExchange(ex) }

// checkExchange rejects exchanges that would produce a record that readers
// parse differently from how it was digested, or an invalid header.
func checkExchange(ex *Exchange) error {
	if ex.URL == "" {
		return errors.New("warc: exchange has an empty URL")
	}
	for i := 0; i < len(ex.URL); i++ {
		if c := ex.URL[i]; c <= ' ' || c == 0x7f {
			return fmt.Errorf("warc: %q: URL contains a space or control character", ex.URL)
		}
	}
	if !hasScheme(ex.URL) {
		return fmt.Errorf("warc: %q: URL is not absolute", ex.URL)
	}
	if ex.Date.IsZero() {
		return fmt.Errorf("warc: %s: Date is zero", ex.URL)
	}
	if ex.IP != "" {
		if a, err := netip.ParseAddr(ex.IP); err != nil || a.Zone() != "" {
			return fmt.Errorf("warc: %s: IP %q is not an IP address without port or zone", ex.URL, ex.IP)
		}
	}
	switch ex.Truncated {
	case "", "length", "time", "disconnect", "unspecified":
	default:
		return fmt.Errorf("warc: %s: Truncated %q is not length, time, disconnect or unspecified", ex.URL, ex.Truncated)
	}
	if !bytes.HasPrefix(ex.ResponseHeader, []byte("HTTP/")) {
		return fmt.Errorf("warc: %s: ResponseHeader does not start with a status line", ex.URL)
	}
	if line, _, _ := bytes.Cut(ex.RequestHeader, []byte("\n")); !bytes.Contains(line, []byte(" HTTP/")) {
		return fmt.Errorf("warc: %s: RequestHeader does not start with a request line", ex.URL)
	}
	if err := checkHeaderBlock(ex.RequestHeader); err != nil {
		return fmt.Errorf("warc: %s: RequestHeader %w", ex.URL, err)
	}
	if err := checkHeaderBlock(ex.ResponseHeader); err != nil {
		return fmt.Errorf("warc: %s: ResponseHeader %w", ex.URL, err)
	}
	if r := ex.Revisit; r != nil {
		if r.RefersToURI == "" || !hasScheme(r.RefersToURI) || strings.ContainsAny(r.RefersToURI, " \t\r\n") {
			return fmt.Errorf("warc: %s: revisit refers to %q, not an absolute URL", ex.URL, r.RefersToURI)
		}
		if id := r.RefersTo; id != "" && (!strings.HasPrefix(id, "<") || !strings.HasSuffix(id, ">") || strings.ContainsAny(id, " \t\r\n")) {
			return fmt.Errorf("warc: %s: revisit refers to %q, not a record ID", ex.URL, id)
		}
		if r.RefersToDate.IsZero() {
			return fmt.Errorf("warc: %s: revisit has no refers-to date", ex.URL)
		}
		if r.Profile != "" && r.Profile != ProfileIdenticalPayload && r.Profile != ProfileServerNotModified {
			return fmt.Errorf("warc: %s: unknown revisit profile %q", ex.URL, r.Profile)
		}
		if ex.Truncated != "" {
			return fmt.Errorf("warc: %s: a truncated payload cannot be a revisit of a whole one", ex.URL)
		}
	}
	for _, p := range append(ex.Protocols, ex.CipherSuite) {
		if strings.ContainsAny(p, " \t\r\n") {
			return fmt.Errorf("warc: %s: protocol or cipher suite %q has white space", ex.URL, p)
		}
	}
	coded := hasField(ex.ResponseHeader, "Transfer-Encoding")
	if coded && ex.WireBody == nil && ex.Revisit == nil && len(ex.Payload) > 0 {
		return fmt.Errorf("warc: %s: ResponseHeader has Transfer-Encoding but the body is given de-chunked, not as sent", ex.URL)
	}
	if !coded && ex.WireBody != nil {
		return fmt.Errorf("warc: %s: a body as sent (WireBody) under a ResponseHeader with no Transfer-Encoding", ex.URL)
	}
	return nil
}

// hasScheme reports whether u starts with an RFC 3986 scheme and a colon.
func hasScheme(u string) bool {
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// checkHeaderBlock reports whether b is exactly one HTTP header block: its
// first blank line is its last line. Readers split the block from the
// payload at the first blank line, so an early one would move bytes from
// the header into what they take for the payload, and the payload digest
// would not verify. nlnwa/gowarc takes any line shorter than three bytes
// for the blank line, so such lines ("x\n") are refused too.
func checkHeaderBlock(b []byte) error {
	if len(b) == 0 {
		return errors.New("is empty")
	}
	for start := 0; start < len(b); {
		i := bytes.IndexByte(b[start:], '\n')
		if i < 0 {
			return errors.New("does not end with a blank line")
		}
		line := b[start : start+i+1]
		start += i + 1
		if len(line) < 3 {
			if len(line) == 2 && line[0] != '\r' {
				return fmt.Errorf("has a one-character line %q", line)
			}
			if start != len(b) {
				return errors.New("has a blank line before its end")
			}
			return nil
		}
	}
	return errors.New("does not end with a blank line")
}

// hasField reports whether the header block b has a field called name
// (case-insensitive, tolerating the whitespace before the colon that
// lenient parsers accept). The first line (request or status line) is
// skipped.
func hasField(b []byte, name string) bool {
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		b = b[i+1:]
		if len(b) <= len(name) || !bytes.EqualFold(b[:len(name)], []byte(name)) {
			continue
		}
		rest := bytes.TrimLeft(b[len(name):], " \t")
		if len(rest) > 0 && rest[0] == ':' {
			return true
		}
	}
}
