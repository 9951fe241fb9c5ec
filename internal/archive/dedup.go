package archive

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/store"
)

// Deduplication across crawls: the captures of earlier crawls are
// imported into this crawl's store as digest records (DigestRecord.Source
// names the crawl), where the archiver looks up every payload it writes,
// as it looks up this crawl's own. One look-up makes a copy a revisit of
// an earlier capture, whether that capture is in this crawl's files or in
// another's.

// importBatch is how many digest records one batch of an import holds: an
// index is streamed into the store, never held whole.
const importBatch = 4096

// maxIndexLine bounds a line of an index read (a CDXJ line is a few
// hundred bytes).
const maxIndexLine = 1 << 20

// metaDedup prefixes the meta record of each source imported, by its
// absolute path: what it was, and its size and time when imported.
const metaDedup = "dedup-from/"

// Imported is what the import of one earlier crawl's index found.
type Imported struct {
	Source  string `json:"source"` // its absolute path
	Kind    string `json:"kind"`   // "cdxj", "wacz" or "data"
	Digests int64  `json:"digests"`
	SHA256  int64  `json:"sha256"` // of Digests, those keyed by SHA-256
	// Skipped counts captures that that no revisit could refer to: revisits,
	// responses not 2xx, digests of another algorithm.
	Skipped int64 `json:"skipped"`
	Size    int64 `json:"size"`     // the file's size (0 for a directory)
	ModTime int64 `json:"mod_time"` // its modification time, Unix nanoseconds
	// Again is set when the source was imported by an earlier run, as it
	// is now, and was not read again.
	Again bool `json:"-"`
}

// ImportDigests imports the payload digests of an earlier crawl into db,
// so that a payload this crawl archives again is written as a revisit of
// the earlier capture. src is a CDXJ index (as weft cdx or pywb write it,
// gzipped or not), a WACZ file (its indexes/*.cdx, *.cdxj, gzipped or
// not), or the data directory of an earlier weft crawl. A digest the store
// holds already keeps its record: the first capture found stays the one
// revisits refer to. A source imported by an earlier run with the same
// size and time is not read again. Errors name the file, and the line of
// an index.
func ImportDigests(ctx context.Context, db *store.DB, src string) (Imported, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return Imported{}, fmt.Errorf("archive: dedup source %s: %w", src, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Imported{}, fmt.Errorf("archive: dedup source: %w", err)
	}
	im := Imported{Source: abs, ModTime: st.ModTime().UnixNano()}
	if !st.IsDir() {
		im.Size = st.Size()
	} else if sst, err := os.Stat(store.Dir(abs)); err == nil {
		// A crawl run again in the directory changes its store's files,
		// not the directory's own entries.
		im.ModTime = sst.ModTime().UnixNano()
	}
	if v, ok, err := db.GetMeta(metaDedup + abs); err != nil {
		return im, err
	} else if ok {
		var was Imported
		if json.Unmarshal(v, &was) == nil && was.Size == im.Size && was.ModTime == im.ModTime {
			was.Again = true
			return was, nil
		}
	}
	in := &importer{ctx: ctx, db: db, im: &im, batch: db.NewBatch(), inBatch: map[string]bool{}}
	switch {
	case st.IsDir():
		im.Kind = "data"
		err = in.dataDir(abs)
	case isZip(abs):
		im.Kind = "wacz"
		err = in.wacz(abs)
	default:
		im.Kind = "cdxj"
		err = in.cdxjFile(abs)
	}
	if err != nil {
		return im, err
	}
	v, _ := json.Marshal(im)
	in.batch.PutMeta(metaDedup+abs, v)
	if im.SHA256 > 0 {
		in.batch.PutMeta(metaDedupSHA256, nil)
	}
	if err := in.batch.Commit(false); err != nil {
		return im, fmt.Errorf("archive: import %s: %w", abs, err)
	}
	return im, nil
}

// metaDedupSHA256 is set once digests keyed by SHA-256 were imported: the
// archiver then looks each new payload up by its SHA-256 too.
const metaDedupSHA256 = "dedup-sha256"

// DedupSources returns what was imported from earlier crawls, in the
// order of their paths.
func DedupSources(db *store.DB) ([]Imported, error) {
	var out []Imported
	var bad error
	err := db.MetaPrefix(metaDedup, func(name string, v []byte) bool {
		var im Imported
		if err := json.Unmarshal(v, &im); err != nil {
			bad = fmt.Errorf("archive: the record of dedup source %s: %w", name, err)
			return false
		}
		out = append(out, im)
		return true
	})
	return out, errors.Join(err, bad)
}

// DedupSources returns what was imported from earlier crawls into the
// crawl read (DedupSources).
func (a *Reader) DedupSources() ([]Imported, error) { return DedupSources(a.db) }

type importer struct {
	ctx   context.Context
	db    *store.DB
	im    *Imported
	batch *store.Batch
	// inBatch are the digests put in batch, which a look-up in the store
	// does not see until it commits.
	inBatch map[string]bool
}

// add records r for the payload whose digest is sum (20 bytes: SHA-1, 32:
// SHA-256), unless one is recorded already.
func (in *importer) add(sum []byte, r store.DigestRecord) error {
	if in.inBatch[string(sum)] {
		return nil
	}
	var ok bool
	var err error
	switch len(sum) {
	case sha1.Size:
		_, ok, err = in.db.GetDigest([sha1.Size]byte(sum))
	case sha256.Size:
		_, ok, err = in.db.GetDigestSHA256([sha256.Size]byte(sum))
	default:
		return fmt.Errorf("a digest of %d bytes", len(sum))
	}
	if err != nil || ok {
		return err
	}
	if len(sum) == sha1.Size {
		in.batch.PutDigest([sha1.Size]byte(sum), r)
	} else {
		in.batch.PutDigestSHA256([sha256.Size]byte(sum), r)
		in.im.SHA256++
	}
	in.im.Digests++
	in.inBatch[string(sum)] = true
	if len(in.inBatch) < importBatch {
		return nil
	}
	if err := in.batch.Commit(false); err != nil {
		return err
	}
	if err := in.ctx.Err(); err != nil {
		return err
	}
	in.batch = in.db.NewBatch()
	clear(in.inBatch)
	return nil
}

// dataDir imports the digest records of an earlier weft crawl: those of
// its own captures, and those it had imported in turn (which keep the
// crawl that holds the capture).
func (in *importer) dataDir(dir string) error {
	if _, err := os.Stat(store.Dir(dir)); err != nil {
		return fmt.Errorf("archive: dedup source %s: not a weft data directory (no %s)", dir, store.Dir(dir))
	}
	r, err := Open(dir, canon.Config{})
	if err != nil {
		return err
	}
	defer r.Close()
	var aerr error
	err = r.db.ScanDigests(func(sum []byte, rec store.DigestRecord) bool {
		if rec.Source == "" {
			rec.Source = dir
		}
		// Its links were followed in that crawl, not in this one.
		rec.Followed, rec.Depth = false, 0
		aerr = in.add(bytes.Clone(sum), rec)
		return aerr == nil
	})
	if err = errors.Join(err, aerr); err != nil {
		return fmt.Errorf("archive: dedup source %s: %w", dir, err)
	}
	return nil
}

func isZip(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "PK\x03\x04"
}

// wacz imports the indexes of a WACZ file: every indexes/*.cdx(j) in it,
// gzipped or not (a compressed index, .cdx.gz with its .idx, is a series
// of gzip members, read as one stream).
func (in *importer) wacz(p string) error {
	zr, err := zip.OpenReader(p)
	if err != nil {
		return fmt.Errorf("archive: dedup source %s: %w", p, err)
	}
	defer zr.Close()
	n := 0
	for _, f := range zr.File {
		name := strings.TrimSuffix(f.Name, ".gz")
		if path.Dir(f.Name) != "indexes" || (path.Ext(name) != ".cdx" && path.Ext(name) != ".cdxj") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("archive: dedup source %s: %s: %w", p, f.Name, err)
		}
		err = in.index(rc, p+"!"+f.Name, strings.HasSuffix(f.Name, ".gz"), p)
		rc.Close()
		if err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("archive: dedup source %s: no index (indexes/*.cdx, *.cdxj) in the WACZ", p)
	}
	return nil
}

func (in *importer) cdxjFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("archive: dedup source: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	magic, _ := br.Peek(2)
	return in.index(br, p, len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b, p)
}

// index reads a CDXJ (or classic CDX) index from r, named name in errors,
// whose captures are in the crawl called source.
func (in *importer) index(r io.Reader, name string, gz bool, source string) error {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("archive: dedup source %s: %w", name, err)
		}
		defer zr.Close()
		r = zr
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxIndexLine)
	line := 0
	for sc.Scan() {
		line++
		c, ok, err := parseIndexLine(sc.Bytes())
		if err != nil {
			return fmt.Errorf("archive: dedup source %s, line %d: %w", name, line, err)
		}
		if !ok {
			in.im.Skipped++
			continue
		}
		rec := store.DigestRecord{URL: c.url, Date: c.date, File: c.file, Offset: c.offset, Length: c.length, Source: source}
		if err := in.add(c.sum, rec); err != nil {
			return fmt.Errorf("archive: dedup source %s, line %d: %w", name, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("archive: dedup source %s, after line %d: %w", name, line, err)
	}
	return nil
}

// indexCapture is what a line of an index says of a capture.
type indexCapture struct {
	url            string
	date           time.Time
	sum            []byte // SHA-1 or SHA-256
	file           string
	offset, length int64
}

// parseIndexLine reads one line of a CDXJ index ("<surt> <timestamp>
// {json}", as pywb, warcio, wabac.js and weft write it) or of a classic
// 11-field CDX ("N b a m s k r M S V g"). It reports false, with no
// error, for a line that names no capture a revisit could refer to: a
// header or blank line, a revisit, a response not 2xx, a digest of
// another algorithm.
func parseIndexLine(b []byte) (indexCapture, bool, error) {
	var c indexCapture
	s := strings.TrimRight(string(b), "\r")
	if strings.TrimSpace(s) == "" || strings.HasPrefix(s, "!") || strings.HasPrefix(s, " CDX") {
		return c, false, nil
	}
	var ts, mime, status, digest string
	if i := strings.IndexByte(s, '{'); i >= 0 {
		head := strings.Fields(s[:i])
		if len(head) != 2 {
			return c, false, fmt.Errorf("want \"<key> <timestamp> {json}\", got %q", trim(s))
		}
		ts = head[1]
		var j struct {
			URL      string          `json:"url"`
			MIME     string          `json:"mime"`
			Status   json.RawMessage `json:"status"`
			Digest   string          `json:"digest"`
			Filename string          `json:"filename"`
			Offset   json.RawMessage `json:"offset"`
			Length   json.RawMessage `json:"length"`
		}
		if err := json.Unmarshal([]byte(s[i:]), &j); err != nil {
			return c, false, fmt.Errorf("the JSON of the line: %w", err)
		}
		if j.URL == "" {
			return c, false, errors.New(`the line has no "url"`)
		}
		c.url, mime, digest, c.file = j.URL, j.MIME, j.Digest, j.Filename
		status = unquote(j.Status)
		c.offset, _ = strconv.ParseInt(unquote(j.Offset), 10, 64)
		c.length, _ = strconv.ParseInt(unquote(j.Length), 10, 64)
	} else {
		f := strings.Fields(s)
		if len(f) != 11 {
			return c, false, fmt.Errorf("neither CDXJ nor an 11-field CDX line: %q", trim(s))
		}
		ts, c.url, mime, status, digest, c.file = f[1], f[2], f[3], f[4], f[5], f[10]
		c.length, _ = strconv.ParseInt(f[8], 10, 64)
		c.offset, _ = strconv.ParseInt(f[9], 10, 64)
	}
	var err error
	if c.date, err = parseCDXTime(ts); err != nil {
		return c, false, err
	}
	if mime == "warc/revisit" || digest == "" || digest == "-" {
		return c, false, nil
	}
	if status != "" && status != "-" {
		code, err := strconv.Atoi(status)
		if err != nil {
			return c, false, fmt.Errorf("status %q is not a number", status)
		}
		if code < 200 || code > 299 {
			return c, false, nil
		}
	}
	c.sum, err = parseDigest(digest)
	if err != nil {
		return c, false, err
	}
	return c, c.sum != nil, nil
}

// unquote is a JSON value as text: a string's contents, or a number.
func unquote(m json.RawMessage) string {
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	return string(m)
}

func trim(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// parseCDXTime reads a CDX timestamp: 14 digits (yyyymmddhhmmss), more
// for a fraction of a second, as few as 4 for a year.
func parseCDXTime(ts string) (time.Time, error) {
	if len(ts) < 4 || strings.Trim(ts, "0123456789") != "" {
		return time.Time{}, fmt.Errorf("timestamp %q is not yyyymmddhhmmss", ts)
	}
	full := ts
	if len(full) < 14 {
		full += "00000101000000"[len(full)-4:]
	}
	t, err := time.Parse("20060102150405", full[:14])
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", ts, err)
	}
	if frac := full[14:]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		t = t.Add(time.Duration(ns))
	}
	return t, nil
}

var base32NoPad = base32.StdEncoding.WithPadding(base32.NoPadding)

// parseDigest reads a payload digest as indexes write it: "sha1:" and
// base32 (WARC's and weft's form, also without the prefix, as classic CDX
// has it), "sha256:" and hex (Browsertrix and wabac.js), or either in hex
// or base32. It returns nil, with no error, for another algorithm.
func parseDigest(d string) ([]byte, error) {
	alg, val, ok := strings.Cut(d, ":")
	if !ok {
		alg, val = "", d
	}
	alg = strings.ReplaceAll(strings.ToLower(alg), "-", "")
	var want int
	switch alg {
	case "sha1":
		want = sha1.Size
	case "sha256":
		want = sha256.Size
	case "":
		switch len(val) {
		case 32, 40:
			want = sha1.Size
		case 52, 56, 64:
			want = sha256.Size
		default:
			return nil, fmt.Errorf("digest %q: no algorithm named, and not the length of a SHA-1 or SHA-256", d)
		}
	default:
		return nil, nil
	}
	if sum, err := hex.DecodeString(val); err == nil && len(sum) == want {
		return sum, nil
	}
	if sum, err := base32NoPad.DecodeString(strings.TrimRight(strings.ToUpper(val), "=")); err == nil && len(sum) == want {
		return sum, nil
	}
	return nil, fmt.Errorf("digest %q is not a %s in base32 or hex", d, map[int]string{sha1.Size: "SHA-1", sha256.Size: "SHA-256"}[want])
}
