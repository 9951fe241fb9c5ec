// Package warc writes fetched HTTP exchanges as WARC/1.1 request and response
// records, one gzip member per record, into size-rotated files.
//
// Each file starts with a warcinfo record. A file is written under a name
// ending in ".open" and renamed to its final name only after it has been
// synced, so a reader that ignores ".open" files never sees a half-written
// file. Every record is its own gzip member, so a record can be read by
// seeking to its offset and decompressing just that member (see [Location]).
//
// A crashed process leaves its ".open" file behind, possibly ending in a
// torn record. [Recover], run when the crawler starts, keeps the valid
// prefix of each such file and gives it its final name. A [Writer] never
// opens an existing file, so it can start in the same directory right
// after, and it locks its ".open" file while it writes it, so that Recover
// run by another process sharing the directory leaves the file alone.
package warc

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/weft-crawler/weft/internal/version"
)

// Defaults applied to the zero values of [Config] fields.
const (
	DefaultPrefix      = "weft"
	DefaultMaxFileSize = 1 << 30 // 1 GiB

	// DefaultCompressionLevel is gzip level 1. On the 40 KB HTML page of
	// BenchmarkCompressionLevel it takes about 45% of the CPU time of the
	// library default, level 6 (about 72 against 160 µs), for output about
	// 6% larger. On an already gzip-encoded body it takes about 4 µs
	// against 110 µs: levels 1 and 2 notice incompressible data and store
	// it, higher levels search it for matches anyway.
	DefaultCompressionLevel = gzip.BestSpeed
)

// Config configures a [Writer]. Only Dir is required.
type Config struct {
	// Dir is the directory the files are written to. It is created if
	// missing.
	Dir string

	// Prefix starts every file name. Zero means DefaultPrefix ("weft"). It
	// must not contain a path separator.
	Prefix string

	// MaxFileSize is the size in bytes at which a file is finished and the
	// next exchange goes into a new file. A file exceeds it only when a
	// single exchange does. Zero means DefaultMaxFileSize (1 GiB).
	MaxFileSize int64

	// Software is the warcinfo "software" field: the program that wrote
	// the file and its version, as Heritrix writes "Heritrix/3.4.0". Zero
	// means this build of weft (version.Software, "weft/" and its
	// version).
	Software string

	// UserAgent is the warcinfo "http-header-user-agent" field: the
	// User-Agent the crawl sends. Zero omits the field.
	UserAgent string

	// Robots is the warcinfo "robots" field: how the crawl treats
	// robots.txt ("obey", as Heritrix writes it). Zero omits the field.
	Robots string

	// Operator is the optional warcinfo "operator" field (a contact).
	Operator string

	// Hostname is the warcinfo "hostname" field. Zero means os.Hostname();
	// it never touches the network.
	Hostname string

	// CompressionLevel is the gzip level: 1 (fastest) to 9 (smallest), or
	// -1 for the gzip library's default (6). Zero means
	// DefaultCompressionLevel (1).
	CompressionLevel int

	// OnFinish, if set, is called with the base name of each file once it
	// is finished (synced and renamed from ".open"), by rotation or by
	// Close: a file that may now be copied elsewhere. It is called from
	// the goroutine that finished the file, outside the Writer's lock.
	OnFinish func(name string)
}

// Validate reports the first field of c that is unusable, naming the field
// and its value.
func (c *Config) Validate() error {
	if c.Dir == "" {
		return errors.New("warc: Config.Dir is empty")
	}
	if strings.ContainsAny(c.Prefix, `/\`) || c.Prefix == "." || c.Prefix == ".." {
		return fmt.Errorf("warc: Config.Prefix %q must not contain a path separator", c.Prefix)
	}
	if c.MaxFileSize < 0 {
		return fmt.Errorf("warc: Config.MaxFileSize %d is negative", c.MaxFileSize)
	}
	if c.CompressionLevel < -1 || c.CompressionLevel > gzip.BestCompression {
		return fmt.Errorf("warc: Config.CompressionLevel %d is outside -1..9", c.CompressionLevel)
	}
	// These go into warcinfo fields, one per line: a line break would
	// forge extra fields or end the block early.
	for _, f := range []struct{ name, value string }{
		{"Prefix", c.Prefix},
		{"Software", c.Software},
		{"UserAgent", c.UserAgent},
		{"Robots", c.Robots},
		{"Operator", c.Operator},
		{"Hostname", c.Hostname},
	} {
		if strings.ContainsAny(f.value, "\r\n") {
			return fmt.Errorf("warc: Config.%s %q contains a line break", f.name, f.value)
		}
	}
	return nil
}

// withDefaults returns a copy of c with zero fields replaced by defaults.
func (c Config) withDefaults() Config {
	if c.Prefix == "" {
		c.Prefix = DefaultPrefix
	}
	if c.MaxFileSize == 0 {
		c.MaxFileSize = DefaultMaxFileSize
	}
	if c.Software == "" {
		c.Software = version.Software()
	}
	if c.CompressionLevel == 0 {
		c.CompressionLevel = DefaultCompressionLevel
	}
	return c
}

// Exchange is one fetched HTTP request and its response.
type Exchange struct {
	// URL is the target URI (WARC-Target-URI): an absolute URL, as the
	// frontier canonicalised it. WriteExchange checks only that it has a
	// scheme and no spaces or control characters.
	URL string

	// Date is the fetch time (WARC-Date), written in UTC with microseconds.
	// It must not be zero.
	Date time.Time

	// IP is the server's address without a port (WARC-IP-Address); empty
	// omits the field.
	IP string

	// RequestHeader is the raw HTTP request block: request line, header
	// lines and the blank line that ends them.
	RequestHeader []byte

	// ResponseHeader is the raw HTTP response header block: status line,
	// header lines and the blank line that ends them. If it names a
	// Transfer-Encoding, WireBody must hold the body as it was sent.
	ResponseHeader []byte

	// Payload is the entity body as received: de-chunked, still
	// content-encoded. WARC-Payload-Digest is its SHA-1: WARC 1.1 §5.9
	// takes the payload of an HTTP block to be its entity-body, the
	// message body with its transfer coding removed and its content
	// coding kept (IIPC warc-specifications issue 22; Heritrix and
	// wget-lua compute it so).
	Payload []byte

	// WireBody, if set, is the message body as it crossed the connection
	// (chunked, with its extensions and trailers), which the response
	// record's block holds after ResponseHeader in place of Payload. Nil
	// means the body came as Payload.
	WireBody []byte

	// Protocols are the record's WARC-Protocol values, outermost last, as
	// IIPC's field proposal names them: "http/1.1" or "h2", then
	// "tls/1.3" over TLS. CipherSuite is the TLS cipher suite's IANA
	// name (WARC-Cipher-Suite), empty over plain TCP.
	Protocols   []string
	CipherSuite string

	// CertificateError, if set, is why the server's TLS certificate failed
	// verification, for an exchange made all the same (a host the crawl
	// was told to accept so): the request and response records carry it
	// as WARC-Certificate-Error, an extension field (WARC 1.1 §4 lets a
	// writer add named fields, which readers that do not know them
	// ignore, as Browsertrix's WARC-JSON-Metadata is), control characters
	// replaced and cut at MaxCertificateError bytes.
	CertificateError string

	// Truncated is "" for a complete payload, or why it was cut short:
	// "length", "time", "disconnect" or "unspecified" (WARC-Truncated).
	Truncated string

	// PayloadSHA1, if set, is the SHA-1 of Payload as the caller already
	// computed it (to look the payload up); the writer trusts it.
	PayloadSHA1 *[sha1.Size]byte

	// Revisit, if set, writes the response as a revisit record: the same
	// payload is already archived, so only the response header block is
	// stored, with the payload's digest and a reference to that capture.
	Revisit *Revisit
}

// MaxCertificateError bounds the WARC-Certificate-Error field: the text
// of a name mismatch lists the certificate's names, which a CDN's
// certificate has by the hundred.
const MaxCertificateError = 512

// ProfileIdenticalPayload is the WARC-Profile of a revisit record whose
// payload is identical to an earlier capture's (WARC 1.1 §6.7.2).
const ProfileIdenticalPayload = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"

// ProfileServerNotModified is the WARC-Profile of a revisit record for a
// 304 Not Modified answer to a conditional request (WARC 1.1 §6.7.3): the
// payload is the earlier capture's.
const ProfileServerNotModified = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"

// Revisit names the capture that holds a revisit record's payload.
type Revisit struct {
	RefersToURI  string    // its WARC-Target-URI
	RefersToDate time.Time // its WARC-Date
	RefersTo     string    // its WARC-Record-ID (Location.RecordID), if known
	// Profile is ProfileIdenticalPayload ("" means it) or
	// ProfileServerNotModified.
	Profile string
}

// Location says where a response (or revisit) record is stored: Length
// bytes from Offset in File are exactly one gzip member holding exactly that
// record.
type Location struct {
	File   string // base name of the finished file (without ".open")
	Offset int64  // offset of the response record's gzip member
	Length int64  // length of that gzip member
	// RecordID is the record's WARC-Record-ID, "<urn:uuid:...>": what a
	// metadata record about it names as WARC-Concurrent-To.
	RecordID string
}

// Metadata is a metadata record about a capture (WARC 1.1 §6.5): fields
// such as the outlinks found in a page, as Heritrix writes them.
type Metadata struct {
	URL          string    // the capture's WARC-Target-URI
	Date         time.Time // its WARC-Date
	ConcurrentTo string    // its WARC-Record-ID (Location.RecordID); "" for none
	// Fields are written in order as "name: value" lines
	// (application/warc-fields); a value holds no line break.
	Fields [][2]string
}
