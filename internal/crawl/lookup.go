package crawl

import (
	"bufio"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"weft/internal/canon"
	"weft/internal/store"
	"weft/internal/warc"
)

// Archive is a crawl's data directory opened for reading: its capture index
// and WARC files. It may be opened while no crawl runs on the directory.
type Archive struct {
	dir   string
	db    *store.DB
	canon *canon.Canonicalizer
}

// OpenArchive opens the capture index of the crawl in dataDir.
func OpenArchive(dataDir string, cc canon.Config) (*Archive, error) {
	path := filepath.Join(dataDir, stateDir)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no crawl in %s: %w", dataDir, err)
	}
	db, err := store.Open(path, &store.Options{ReadOnly: true, CacheSize: 8 << 20})
	if err != nil {
		return nil, fmt.Errorf("open the crawl in %s (is a crawl running on it?): %w", dataDir, err)
	}
	return &Archive{dir: dataDir, db: db, canon: canon.New(cc)}, nil
}

// Close closes the index.
func (a *Archive) Close() error { return a.db.Close() }

// cdxjLine is the JSON part of a CDXJ line, as pywb writes it.
type cdxjLine struct {
	URL       string `json:"url"`
	MIME      string `json:"mime,omitempty"`
	Status    string `json:"status,omitempty"`
	Digest    string `json:"digest"`
	Length    string `json:"length"`
	Offset    string `json:"offset"`
	Filename  string `json:"filename"`
	NearDupOf string `json:"near_dup_of,omitempty"`
}

// cdxTime is a capture's 14-digit CDX timestamp.
func cdxTime(t time.Time) string { return t.UTC().Format("20060102150405") }

func digestString(sum [20]byte) string {
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// WriteCDXJ writes the capture index as CDXJ, one line per capture in SURT
// then time order: "<surt> <timestamp> {json}". A revisit has the MIME type
// "warc/revisit", as in pywb's indexes. It returns the lines written.
func (a *Archive) WriteCDXJ(w io.Writer) (int, error) {
	bw := bufio.NewWriter(w)
	n := 0
	var werr error
	err := a.db.ScanCaptures(func(key string, r store.CaptureRecord) bool {
		line := cdxjLine{
			URL: r.URL, MIME: r.MIME, Digest: digestString(r.Digest),
			Length: strconv.FormatInt(r.Length, 10), Offset: strconv.FormatInt(r.Offset, 10), Filename: r.File,
			NearDupOf: r.NearDupOf,
		}
		if r.Status != 0 {
			line.Status = strconv.Itoa(r.Status)
		}
		if r.Kind == store.CaptureRevisit {
			line.MIME = "warc/revisit"
		}
		js, err := json.Marshal(line)
		if err != nil {
			werr = err
			return false
		}
		if _, werr = fmt.Fprintf(bw, "%s %s %s\n", key, cdxTime(r.Date), js); werr != nil {
			return false
		}
		n++
		return true
	})
	if err == nil {
		err = werr
	}
	if err == nil {
		err = bw.Flush()
	}
	return n, err
}

// Lookup is one capture of a URL, read back from its WARC file.
type Lookup struct {
	Capture store.CaptureRecord
	// Record is the capture's record; for a revisit its Payload is the
	// original capture's, which Original names.
	Record   warc.Stored
	Original *store.DigestRecord
}

// ErrNoCapture is returned by Get for a URL the index does not hold.
var ErrNoCapture = errors.New("no capture of this URL")

// Get returns the capture of rawURL closest to at (the latest if at is
// zero), with its response headers and payload; a revisit is resolved to
// the payload of the capture it refers to.
func (a *Archive) Get(rawURL string, at time.Time) (Lookup, error) {
	u, err := a.canon.Parse(rawURL)
	if err != nil {
		return Lookup{}, fmt.Errorf("%q: %w", rawURL, err)
	}
	var best store.CaptureRecord
	found := false
	err = a.db.Captures(u.SURT(), func(r store.CaptureRecord) bool {
		if !found || at.IsZero() || absDur(r.Date.Sub(at)) < absDur(best.Date.Sub(at)) {
			best, found = r, true
		}
		return true
	})
	if err != nil {
		return Lookup{}, err
	}
	if !found {
		return Lookup{}, fmt.Errorf("%s: %w", u.String, ErrNoCapture)
	}
	l := Lookup{Capture: best}
	if l.Record, err = warc.ReadRecord(a.warcPath(best.File), best.Offset); err != nil {
		return l, err
	}
	if best.Kind != store.CaptureRevisit {
		return l, nil
	}
	orig, ok, err := a.db.GetDigest(best.Digest)
	if err != nil {
		return l, err
	}
	if !ok {
		return l, fmt.Errorf("%s: a revisit of payload %s, which the index does not hold", u.String, digestString(best.Digest))
	}
	l.Original = &orig
	o, err := warc.ReadRecord(a.warcPath(orig.File), orig.Offset)
	if err != nil {
		return l, fmt.Errorf("%s: the original of the revisit: %w", u.String, err)
	}
	if o.PayloadDigest != l.Record.PayloadDigest {
		return l, fmt.Errorf("%s: the revisit's payload digest %s is not its original's %s", u.String, l.Record.PayloadDigest, o.PayloadDigest)
	}
	l.Record.Payload = o.Payload
	return l, nil
}

func (a *Archive) warcPath(file string) string {
	return filepath.Join(a.dir, "warc", filepath.Base(file))
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
