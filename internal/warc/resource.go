package warc

import (
	"crypto/sha1"
	"fmt"
	"strings"
	"time"
)

// Resource is a record of something weft made or took apart from an
// exchange: a "resource" (WARC 1.1 §6.4) with a synthesized target URI,
// such as a rendered page's DOM or its screenshot, or a "conversion"
// (§6.8) of a record's content to another format. It is linked to the
// exchange's response by WARC-Concurrent-To (a resource, which WARC 1.1
// gives no WARC-Refers-To) or WARC-Refers-To (a conversion).
type Resource struct {
	// Type is "conversion" or "resource".
	Type string
	// URL is the WARC-Target-URI. A resource made beside a page is named
	// by a urn: that holds the page's URL ("urn:view:" + URL for its
	// screenshot, as Browsertrix names them), so that no index takes it
	// for a capture of the page; a conversion's is the converted record's
	// (WARC 1.1 §5.10).
	URL  string
	Date time.Time
	// RefersTo is the record ID of the response it was made from or with
	// (Location.RecordID); "" for none.
	RefersTo    string
	ContentType string
	Block       []byte
}

// WriteResource appends a conversion or resource record, in the current
// file or the next one.
func (w *Writer) WriteResource(r Resource) (Location, error) {
	if err := checkResource(&r); err != nil {
		return Location{}, err
	}
	e := w.encoders.Get()
	defer w.release(e)
	e.out.Reset()
	var id [1][16]byte
	newUUIDs(id[:])
	h := append(e.hdr[:0], warcVersion...)
	h = appendField(h, "WARC-Type", r.Type)
	h = appendIDField(h, "WARC-Record-ID", id[0])
	h = appendDateField(h, "WARC-Date", r.Date.UTC())
	h = appendField(h, "WARC-Target-URI", r.URL)
	switch {
	case r.RefersTo == "":
	case r.Type == "conversion":
		h = appendField(h, "WARC-Refers-To", r.RefersTo)
	default: // WARC 1.1 allows no WARC-Refers-To in a resource record
		h = appendField(h, "WARC-Concurrent-To", r.RefersTo)
	}
	sum := sha1.Sum(r.Block)
	h = appendDigestField(h, "WARC-Block-Digest", sum)
	h = appendDigestField(h, "WARC-Payload-Digest", sum)
	h = appendField(h, "Content-Type", r.ContentType)
	h = appendLengthField(h, len(r.Block))
	e.hdr = append(h, crlf...)
	if err := e.member(r.Block); err != nil {
		return Location{}, fmt.Errorf("warc: %s for %s: compress: %w", r.Type, r.URL, err)
	}
	loc, err := w.append(e.out.Bytes(), r.URL, r.Date)
	loc.Length = int64(e.out.Len())
	loc.RecordID = string(appendID(nil, id[0]))
	return loc, err
}

// checkResource rejects a record that would be invalid.
func checkResource(r *Resource) error {
	if r.Type != "conversion" && r.Type != "resource" {
		return fmt.Errorf("warc: record for %q: type %q is neither conversion nor resource", r.URL, r.Type)
	}
	if r.URL == "" || !hasScheme(r.URL) || strings.ContainsAny(r.URL, " \t\r\n") {
		return fmt.Errorf("warc: %s record for %q: URL is not absolute", r.Type, r.URL)
	}
	if r.Date.IsZero() {
		return fmt.Errorf("warc: %s record for %s: Date is zero", r.Type, r.URL)
	}
	if c := r.RefersTo; c != "" && (!strings.HasPrefix(c, "<") || !strings.HasSuffix(c, ">") || strings.ContainsAny(c, " \t\r\n")) {
		return fmt.Errorf("warc: %s record for %s: RefersTo %q is not a record ID", r.Type, r.URL, c)
	}
	if r.ContentType == "" || strings.ContainsAny(r.ContentType, "\r\n") {
		return fmt.Errorf("warc: %s record for %s: Content-Type %q", r.Type, r.URL, r.ContentType)
	}
	return nil
}
