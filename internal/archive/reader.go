package archive

import (
	"archive/zip"
	"bufio"
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/store"
	"github.com/weft-crawler/weft/internal/warc"
)

// Reader is a crawl's data directory opened for reading: its capture
// index and WARC files. It may be opened while no crawl runs on the
// directory.
type Reader struct {
	dir   string
	db    *store.DB
	canon *canon.Canonicalizer
	objs  ObjectStore // where uploaded WARC files are; nil: none was given
}

// UseObjects gives the object store that WARC files uploaded by the crawl
// (Config.Objects) are read from.
func (a *Reader) UseObjects(o ObjectStore) { a.objs = o }

// NewReader reads the archive of a crawl that runs: its data directory,
// its store, open, and the object store its WARC files may have gone to
// (nil: none).
func NewReader(dataDir string, db *store.DB, cc *canon.Canonicalizer, objs ObjectStore) *Reader {
	return &Reader{dir: dataDir, db: db, canon: cc, objs: objs}
}

// Open opens the capture index of the crawl in dataDir.
func Open(dataDir string, cc canon.Config) (*Reader, error) {
	path := store.Dir(dataDir)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("archive: no crawl in %s: %w", dataDir, err)
	}
	db, err := store.Open(path, &store.Options{ReadOnly: true, CacheSize: 8 << 20})
	if err != nil {
		if iu := (*store.InUseError)(nil); errors.As(err, &iu) {
			return nil, store.InUse(dataDir, err, "read it once that has ended")
		}
		return nil, fmt.Errorf("archive: open the crawl in %s: %w", dataDir, err)
	}
	return &Reader{dir: dataDir, db: db, canon: canon.New(cc)}, nil
}

// Captures calls fn with every capture of the index, in key order, until
// it returns false.
func (a *Reader) Captures(fn func(store.CaptureRecord) bool) error {
	return a.db.ScanCaptures(func(_ string, r store.CaptureRecord) bool { return fn(r) })
}

// Undelivered counts the page events made durable that not every sink has
// taken yet: the next run delivers them.
func (a *Reader) Undelivered() (int, error) {
	n := 0
	err := a.db.MetaPrefix(metaOutbox, func(string, []byte) bool { n++; return true })
	return n, err
}

// Close closes the index.
func (a *Reader) Close() error { return a.db.Close() }

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

// DigestString writes a payload digest as WARC does: "sha1:" and base32.
func DigestString(sum [20]byte) string {
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// WriteCDXJ writes the capture index as CDXJ, one line per capture in SURT
// then time order: "<surt> <timestamp> {json}". A revisit has the MIME type
// "warc/revisit", as in pywb's indexes. It returns the lines written.
func (a *Reader) WriteCDXJ(w io.Writer) (int, error) {
	bw := bufio.NewWriter(w)
	n := 0
	var werr error
	err := a.db.ScanCaptures(func(key string, r store.CaptureRecord) bool {
		line := cdxjLine{
			URL: r.URL, MIME: r.MIME, Digest: DigestString(r.Digest),
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
func (a *Reader) Get(rawURL string, at time.Time) (Lookup, error) {
	u, err := a.canon.Parse(rawURL)
	if err != nil {
		return Lookup{}, fmt.Errorf("archive: %q: %w", rawURL, err)
	}
	// A SURT is in lower case: other URLs may share u's key. Captures of u
	// itself are chosen from; the others only if u has none (a capture of
	// a variant of u that the crawl requested as written).
	var best store.CaptureRecord
	found, exact := false, false
	err = a.db.Captures(u.SURT(), func(r store.CaptureRecord) bool {
		isExact := r.URL == u.String
		switch {
		case exact && !isExact:
		case !found, isExact && !exact, at.IsZero(), closer(r.Date, best.Date, at):
			best, found, exact = r, true, isExact
		}
		return true
	})
	if err != nil {
		return Lookup{}, fmt.Errorf("archive: %s: %w", u.String, err)
	}
	if !found {
		return Lookup{}, fmt.Errorf("archive: %s: %w", u.String, ErrNoCapture)
	}
	l := Lookup{Capture: best}
	if l.Record, err = a.ReadRecord(best.File, best.Offset, best.Length); err != nil {
		return l, fmt.Errorf("archive: %s: %w", u.String, err)
	}
	if best.Kind != store.CaptureRevisit {
		return l, nil
	}
	orig, ok, err := a.db.GetDigest(best.Digest)
	if err != nil {
		return l, fmt.Errorf("archive: %s: %w", u.String, err)
	}
	if !ok {
		return l, fmt.Errorf("archive: %s: a revisit of payload %s, which the index does not hold", u.String, DigestString(best.Digest))
	}
	l.Original = &orig
	var o warc.Stored
	if orig.Source != "" {
		o, err = readEarlier(orig)
	} else {
		o, err = a.ReadRecord(orig.File, orig.Offset, orig.Length)
	}
	if err != nil {
		return l, fmt.Errorf("archive: %s: the original of the revisit: %w", u.String, err)
	}
	// An earlier crawl may have named the payload by another algorithm.
	if sameAlgorithm(o.PayloadDigest, l.Record.PayloadDigest) && o.PayloadDigest != l.Record.PayloadDigest {
		return l, fmt.Errorf("archive: %s: the revisit's payload digest %s is not its original's %s", u.String, l.Record.PayloadDigest, o.PayloadDigest)
	}
	l.Record.Payload = o.Payload
	return l, nil
}

// ReadRecord reads the record at offset in file: from the local disk, or,
// once the file was uploaded and removed, from the object store by byte
// range.
func (a *Reader) ReadRecord(file string, offset, length int64) (warc.Stored, error) {
	p := a.warcPath(file)
	if _, err := os.Stat(p); err == nil {
		return warc.ReadRecord(p, offset)
	}
	key, ok, err := objectKey(a.db, file)
	switch {
	case err != nil:
		return warc.Stored{}, err
	case !ok:
		return warc.ReadRecord(p, offset) // and its error names the missing file
	case a.objs == nil:
		return warc.Stored{}, fmt.Errorf("%s was uploaded to the object store as %s; give its settings to read it", filepath.Base(file), key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := a.objs.Open(ctx, key, offset, length)
	if err != nil {
		return warc.Stored{}, err
	}
	defer r.Close()
	return warc.ReadRecordFrom(r, key, offset)
}

// warcPath is where a WARC file is: its finished name, or, if a crawl was
// killed before finishing it, its ".open" name (every record the index
// names was whole when it was indexed).
func (a *Reader) warcPath(file string) string {
	p := filepath.Join(a.dir, "warc", filepath.Base(file))
	if _, err := os.Stat(p); err != nil {
		if _, oerr := os.Stat(p + ".open"); oerr == nil {
			return p + ".open"
		}
	}
	return p
}

// closer reports whether a is nearer to at than b (a tie goes to b).
func closer(a, b, at time.Time) bool {
	da, db := gap(a, at), gap(b, at)
	return da < db
}

// gap is |t - at| in nanoseconds, without time.Sub's saturation.
func gap(t, at time.Time) uint64 {
	x, y := t.UnixNano(), at.UnixNano()
	if x > y {
		return uint64(x) - uint64(y)
	}
	return uint64(y) - uint64(x)
}

// PageCapture is a capture of a page, for a replay's list of pages.
type PageCapture struct {
	URL   string
	Date  time.Time
	Title string // its <title>, "" for none
}

// Pages returns the HTML pages the index holds, each URL once at its first
// capture with status 200, in the order they were captured. A revisit,
// whose payload was not read again, takes the title of a capture of the
// same payload that has one.
func (a *Reader) Pages() ([]PageCapture, error) {
	type page struct {
		PageCapture
		digest [sha1.Size]byte
	}
	first := map[string]page{}
	titles := map[[sha1.Size]byte]string{}
	err := a.db.ScanCaptures(func(_ string, r store.CaptureRecord) bool {
		if r.Status != 200 || (r.MIME != "text/html" && r.MIME != "application/xhtml+xml") {
			return true
		}
		if f, ok := first[r.URL]; !ok || r.Date.Before(f.Date) {
			first[r.URL] = page{PageCapture{URL: r.URL, Date: r.Date, Title: r.Title}, r.Digest}
		}
		if r.Title != "" {
			titles[r.Digest] = r.Title
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("archive: read the capture index: %w", err)
	}
	out := make([]PageCapture, 0, len(first))
	for _, f := range first {
		if f.Title == "" {
			f.Title = titles[f.digest]
		}
		out = append(out, f.PageCapture)
	}
	slices.SortFunc(out, func(x, y PageCapture) int { return cmp.Or(x.Date.Compare(y.Date), cmp.Compare(x.URL, y.URL)) })
	return out, nil
}

// WARCFiles returns the paths of the crawl's finished WARC files, in name
// (so time) order. A file still ".open" is an error naming it: a crawl is
// running, or one stopped without recovering it (a crawl started on the
// directory recovers it); so is a file the index names that is not here
// (uploaded to an object store and removed).
func (a *Reader) WARCFiles() ([]string, error) {
	dir := filepath.Join(a.dir, "warc")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("archive: the WARC files: %w", err)
	}
	var out []string
	for _, e := range entries {
		switch name := e.Name(); {
		case strings.HasSuffix(name, ".open"):
			return nil, fmt.Errorf("archive: %s is not finished (is a crawl running on %s?)", filepath.Join(dir, name), a.dir)
		case strings.HasSuffix(name, ".warc.gz"):
			out = append(out, filepath.Join(dir, name))
		}
	}
	var missing string
	err = a.db.ScanCaptures(func(_ string, r store.CaptureRecord) bool {
		if !slices.Contains(out, filepath.Join(dir, filepath.Base(r.File))) {
			missing = r.File
			return false
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("archive: read the capture index: %w", err)
	}
	if missing != "" {
		return nil, fmt.Errorf("archive: the index names %s, which is not in %s", missing, dir)
	}
	return out, nil
}

func sameAlgorithm(a, b string) bool {
	x, _, _ := strings.Cut(a, ":")
	y, _, _ := strings.Cut(b, ":")
	return strings.EqualFold(x, y)
}

// readEarlier reads the record of a capture of an earlier crawl: from the
// WARC files of its data directory, from inside its WACZ file, or from
// beside its CDXJ index (or in a warc/ directory there).
func readEarlier(orig store.DigestRecord) (warc.Stored, error) {
	src, name := orig.Source, filepath.Base(orig.File)
	st, err := os.Stat(src)
	if err != nil {
		return warc.Stored{}, fmt.Errorf("the earlier crawl %s: %w", src, err)
	}
	if st.IsDir() {
		return warc.ReadRecord((&Reader{dir: src}).warcPath(name), orig.Offset)
	}
	if isZip(src) {
		zr, err := zip.OpenReader(src)
		if err != nil {
			return warc.Stored{}, fmt.Errorf("the earlier crawl %s: %w", src, err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.Name != "archive/"+name {
				continue
			}
			base, err := f.DataOffset()
			if err != nil || f.Method != zip.Store {
				return warc.Stored{}, fmt.Errorf("the earlier crawl %s: %s cannot be read at an offset (%v)", src, f.Name, err)
			}
			zf, err := os.Open(src)
			if err != nil {
				return warc.Stored{}, err
			}
			defer zf.Close()
			n := orig.Length
			if n <= 0 {
				n = int64(f.UncompressedSize64) - orig.Offset
			}
			return warc.ReadRecordFrom(io.NewSectionReader(zf, base+orig.Offset, n), src+"!"+f.Name, orig.Offset)
		}
		return warc.Stored{}, fmt.Errorf("the earlier crawl %s holds no archive/%s", src, name)
	}
	dir := filepath.Dir(src)
	for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, "warc", name)} {
		if _, err := os.Stat(p); err == nil {
			return warc.ReadRecord(p, orig.Offset)
		}
	}
	return warc.Stored{}, fmt.Errorf("%s, of the earlier crawl indexed by %s, is neither in %s nor in %s", name, src, dir, filepath.Join(dir, "warc"))
}
