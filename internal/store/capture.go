package store

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The capture index and the payload digests are keyed by content and by
// URL, not by host partition:
//
//	Digest:  'D' sha1[20]              -> DigestRecord (the first capture of a payload)
//	         'D' sha256[32]            -> DigestRecord (of an earlier crawl whose index gives SHA-256)
//	Capture: 'C' key 0x00 time[8]      -> CaptureRecord (one per archived response)
//	Sim:     'S' simhash[8]            -> URL, depth (a page the near-duplicate index holds)
//
// key is the caller's sort key for the URL (its SURT); time is the capture's
// Unix nanoseconds, big-endian, so one URL's captures are in time order and
// the whole table is in CDX order.
const (
	tagDigest  = 'D'
	tagCapture = 'C'
	tagSim     = 'S'
)

const (
	digestVersion  = 2 // 2 adds Source
	captureVersion = 2 // 2 adds Title
	simVersion     = 3
)

// DigestRecord says where a payload was first archived: a revisit of it
// refers to this capture.
type DigestRecord struct {
	URL    string
	Date   time.Time // its WARC-Date
	File   string    // WARC file, offset and length of its response record
	Offset int64
	Length int64
	// Followed says that the capture was parsed and its links followed, at
	// link depth Depth: a later copy at that depth or deeper need not be.
	Followed bool
	Depth    int
	RecordID string // its WARC-Record-ID
	// Source names the earlier crawl the capture is in (the index file,
	// WACZ or data directory it was imported from: ImportDigests), ""
	// for a capture of this crawl. A revisit refers to a capture of
	// another crawl by its URI and date; its file is not this crawl's.
	Source string
}

// CaptureKind says what a capture's record holds.
type CaptureKind uint8

// Capture kinds.
const (
	CaptureResponse CaptureKind = iota // a response record with its payload
	CaptureRevisit                     // a revisit record: the payload is another capture's
)

// CaptureRecord is one archived response: a line of the capture index.
type CaptureRecord struct {
	URL    string
	Date   time.Time // its WARC-Date; also in the key
	Status int
	MIME   string
	Digest [sha1.Size]byte // of the payload
	File   string          // WARC file, offset and length of the record
	Offset int64
	Length int64
	Kind   CaptureKind
	// NearDupOf is the URL of a stored page this one is a near-duplicate
	// of, "" if none (or not judged).
	NearDupOf string
	// SimHash is the page's fingerprint, 0 if it was not judged.
	SimHash uint64
	// Title is an HTML page's <title>, "" for none.
	Title string
}

func appendDigestKey(dst []byte, sum [sha1.Size]byte) []byte {
	return append(append(dst, tagDigest), sum[:]...)
}

// appendCaptureKey appends 'C' key 0x00, and the time if not zero.
func appendCaptureKey(dst []byte, key string, at time.Time) []byte {
	dst = append(append(append(dst, tagCapture), key...), hostEnd)
	if at.IsZero() {
		return dst
	}
	return binary.BigEndian.AppendUint64(dst, timeKey(at))
}

// timeKey orders times as unsigned bytes: Unix nanoseconds with the sign
// bit flipped, so that times before 1970 sort first.
func timeKey(t time.Time) uint64 { return uint64(t.UnixNano()) ^ 1<<63 }

// checkCaptureKey rejects a key that cannot be put in a capture key.
func checkCaptureKey(key string) error {
	if key == "" {
		return errors.New("empty capture key")
	}
	if strings.IndexByte(key, hostEnd) >= 0 {
		return fmt.Errorf("capture key %q contains a NUL byte", key)
	}
	return nil
}

// PutDigest records where the payload with SHA-1 sum was first archived.
func (b *Batch) PutDigest(sum [sha1.Size]byte, r DigestRecord) {
	b.putDigest(sum[:], r)
}

// PutDigestSHA256 records where the payload with SHA-256 sum was first
// archived: a capture of an earlier crawl whose index gives SHA-256
// digests (as Browsertrix's do), which a payload's SHA-1 cannot find.
func (b *Batch) PutDigestSHA256(sum [sha256.Size]byte, r DigestRecord) {
	b.putDigest(sum[:], r)
}

func (b *Batch) putDigest(sum []byte, r DigestRecord) {
	if !b.ok() {
		return
	}
	b.key = append(append(b.key[:0], tagDigest), sum...)
	v := append(b.val[:0], digestVersion)
	v = appendString(v, r.URL)
	v = appendTime(v, r.Date)
	v = appendString(v, r.File)
	v = binary.AppendVarint(v, r.Offset)
	v = binary.AppendVarint(v, r.Length)
	followed := byte(0)
	if r.Followed {
		followed = 1
	}
	v = append(v, followed)
	v = binary.AppendVarint(v, int64(r.Depth))
	v = appendString(v, r.RecordID)
	b.val = appendString(v, r.Source)
	b.set(b.key, b.val)
}

// GetDigest returns where the payload with SHA-1 sum was first archived,
// and false if it was not.
func (db *DB) GetDigest(sum [sha1.Size]byte) (DigestRecord, bool, error) {
	return db.getDigest(appendDigestKey(nil, sum))
}

// GetDigestSHA256 returns the capture recorded for the payload with
// SHA-256 sum (PutDigestSHA256), and false if there is none.
func (db *DB) GetDigestSHA256(sum [sha256.Size]byte) (DigestRecord, bool, error) {
	return db.getDigest(append([]byte{tagDigest}, sum[:]...))
}

func (db *DB) getDigest(key []byte) (DigestRecord, bool, error) {
	var r DigestRecord
	ok, err := db.get(key, func(val []byte) error {
		var derr error
		r, derr = decodeDigest(key, val)
		return derr
	})
	return r, ok, err
}

func decodeDigest(key, val []byte) (DigestRecord, error) {
	var r DigestRecord
	d := decoder{b: val}
	v := d.version(digestVersion)
	r.URL = d.str("url")
	r.Date = d.time("date")
	r.File = d.str("file")
	r.Offset = d.varint("offset")
	r.Length = d.varint("length")
	r.Followed = d.byte1("followed") == 1
	r.Depth = d.int("depth")
	r.RecordID = d.str("record-id")
	if v >= 2 {
		r.Source = d.str("source")
	}
	return r, d.finish(key)
}

// ScanDigests calls fn for every payload digest recorded, SHA-1 (20
// bytes) and SHA-256 (32) alike, in digest order, until fn returns false.
func (db *DB) ScanDigests(fn func(sum []byte, r DigestRecord) bool) error {
	return db.scan("digests", []byte{tagDigest}, []byte{tagDigest + 1}, func(it *pebble.Iterator) (bool, error) {
		k := it.Key()
		if len(k) != 1+sha1.Size && len(k) != 1+sha256.Size {
			return false, fmt.Errorf("decode %s: not a digest key", fmtKey(k))
		}
		r, err := decodeDigest(k, it.Value())
		if err != nil {
			return false, err
		}
		return fn(k[1:], r), nil
	})
}

// PutCapture adds a capture of the URL whose sort key is key.
func (b *Batch) PutCapture(key string, r CaptureRecord) {
	if !b.ok() {
		return
	}
	if err := checkCaptureKey(key); err != nil {
		b.fail(err)
		return
	}
	if r.Date.IsZero() {
		b.fail(fmt.Errorf("capture of %s has no date", r.URL))
		return
	}
	b.key = appendCaptureKey(b.key[:0], key, r.Date)
	v := append(b.val[:0], captureVersion)
	v = appendString(v, r.URL)
	v = binary.AppendVarint(v, int64(r.Status))
	v = appendString(v, r.MIME)
	v = append(v, r.Digest[:]...)
	v = appendString(v, r.File)
	v = binary.AppendVarint(v, r.Offset)
	v = binary.AppendVarint(v, r.Length)
	v = append(v, byte(r.Kind))
	v = appendString(v, r.NearDupOf)
	v = binary.BigEndian.AppendUint64(v, r.SimHash)
	b.val = appendString(v, r.Title)
	b.set(b.key, b.val)
}

func decodeCapture(key, val []byte) (string, CaptureRecord, error) {
	var r CaptureRecord
	if len(key) < 1+1+1+8 || key[0] != tagCapture || key[len(key)-9] != hostEnd {
		return "", r, fmt.Errorf("decode %s: not a capture key", fmtKey(key))
	}
	r.Date = time.Unix(0, int64(binary.BigEndian.Uint64(key[len(key)-8:])^1<<63))
	d := decoder{b: val}
	version := d.version(captureVersion)
	r.URL = d.str("url")
	r.Status = d.int("status")
	r.MIME = d.str("mime")
	if d.err == nil && len(d.b)-d.off >= sha1.Size {
		copy(r.Digest[:], d.b[d.off:])
		d.off += sha1.Size
	} else {
		d.fail("digest")
	}
	r.File = d.str("file")
	r.Offset = d.varint("offset")
	r.Length = d.varint("length")
	r.Kind = CaptureKind(d.byte1("kind"))
	r.NearDupOf = d.str("near-dup-of")
	if d.err == nil && len(d.b)-d.off >= 8 {
		r.SimHash = binary.BigEndian.Uint64(d.b[d.off:])
		d.off += 8
	} else {
		d.fail("simhash")
	}
	if version >= 2 {
		r.Title = d.str("title")
	}
	if err := d.finish(key); err != nil {
		return "", r, err
	}
	return string(key[1 : len(key)-9]), r, nil
}

// Captures calls fn for each capture of the URL whose sort key is key, in
// time order, until fn returns false.
func (db *DB) Captures(key string, fn func(CaptureRecord) bool) error {
	return db.captures(key, false, fn)
}

// CapturesNewestFirst is Captures, newest first: what looks for the
// latest capture of a kind stops there, however many a URL recrawled for
// years has.
func (db *DB) CapturesNewestFirst(key string, fn func(CaptureRecord) bool) error {
	return db.captures(key, true, fn)
}

func (db *DB) captures(key string, back bool, fn func(CaptureRecord) bool) error {
	if err := checkCaptureKey(key); err != nil {
		return fmt.Errorf("store %s: %w", db.dir, err)
	}
	lower := appendCaptureKey(nil, key, time.Time{})
	upper := append(bytes.Clone(lower[:len(lower)-1]), hostEnd+1)
	return db.scanDir(func() string { return "captures of " + key }, lower, upper, back, func(it *pebble.Iterator) (bool, error) {
		_, r, err := decodeCapture(it.Key(), it.Value())
		if err != nil {
			return false, err
		}
		return fn(r), nil
	})
}

// LastCaptures returns the last n captures of key (a SURT), newest first.
func (db *DB) LastCaptures(key string, n int) ([]CaptureRecord, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []CaptureRecord
	err := db.CapturesNewestFirst(key, func(r CaptureRecord) bool {
		out = append(out, r)
		return len(out) < n
	})
	return out, err
}

// ScanCaptures calls fn for every capture, in key then time order (CDX
// order), until fn returns false.
func (db *DB) ScanCaptures(fn func(key string, r CaptureRecord) bool) error {
	return db.scan("captures", []byte{tagCapture}, []byte{tagCapture + 1}, func(it *pebble.Iterator) (bool, error) {
		key, r, err := decodeCapture(it.Key(), it.Value())
		if err != nil {
			return false, err
		}
		return fn(key, r), nil
	})
}

func appendSimKey(dst []byte, fp uint64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, tagSim), fp)
}

// SimRecord is what a fingerprint of the near-duplicate index stands for:
// an original page, or a copy of one kept so that other copies of that
// original are found through it (version 2), and what the original
// links to (version 3).
type SimRecord struct {
	URL   string // the original: the page itself, or the page a copy copies
	Depth int    // the link depth the original's links were followed at
	Copy  bool   // a near-duplicate of URL
	// Links is a Bloom filter of what the original links to (package
	// neardup); zero for a record of an older weft.
	Links [LinkWords]uint64
}

// LinkWords is the size of SimRecord.Links in 64-bit words.
const LinkWords = 16

// PutSimHash records fp in the index later pages are judged against for
// near-duplicates.
func (b *Batch) PutSimHash(fp uint64, r SimRecord) {
	if !b.ok() {
		return
	}
	b.key = appendSimKey(b.key[:0], fp)
	v := appendString(append(b.val[:0], simVersion), r.URL)
	v = binary.AppendVarint(v, int64(r.Depth))
	copied := byte(0)
	if r.Copy {
		copied = 1
	}
	v = append(v, copied)
	if r.Links == ([LinkWords]uint64{}) {
		v = append(v, 0)
	} else {
		v = append(v, 1)
		for _, w := range r.Links {
			v = binary.BigEndian.AppendUint64(v, w)
		}
	}
	b.val = v
	b.set(b.key, b.val)
}

func decodeSim(key, val []byte) (r SimRecord, err error) {
	d := decoder{b: val}
	v := d.version(simVersion)
	r.URL = d.str("url")
	r.Depth = d.int("depth")
	if v >= 2 {
		r.Copy = d.byte1("copy") == 1
	}
	if v >= 3 && d.byte1("links") == 1 {
		for i := range r.Links {
			r.Links[i] = d.uint64be("links")
		}
	}
	return r, d.finish(key)
}

// GetSimHash returns the record of fp, and false if there is none.
func (db *DB) GetSimHash(fp uint64) (r SimRecord, ok bool, err error) {
	key := appendSimKey(nil, fp)
	ok, err = db.get(key, func(val []byte) error {
		var derr error
		r, derr = decodeSim(key, val)
		return derr
	})
	return r, ok, err
}

// ScanSimHashes calls fn for every recorded SimHash, in fingerprint
// order, until fn returns false.
func (db *DB) ScanSimHashes(fn func(fp uint64, r SimRecord) bool) error {
	return db.scan("simhashes", []byte{tagSim}, []byte{tagSim + 1}, func(it *pebble.Iterator) (bool, error) {
		k := it.Key()
		if len(k) != 1+8 {
			return false, fmt.Errorf("decode %s: not a simhash key", fmtKey(k))
		}
		r, err := decodeSim(k, it.Value())
		if err != nil {
			return false, err
		}
		return fn(binary.BigEndian.Uint64(k[1:]), r), nil
	})
}

// fmtCaptureKey describes a digest, capture or simhash key for an error
// message.
func fmtCaptureKey(k []byte) (string, bool) {
	switch {
	case len(k) == 1+8 && k[0] == tagSim:
		return fmt.Sprintf("simhash %016x", binary.BigEndian.Uint64(k[1:])), true
	case (len(k) == 1+sha1.Size || len(k) == 1+sha256.Size) && k[0] == tagDigest:
		return "digest " + hex.EncodeToString(k[1:]), true
	case len(k) > 10 && k[0] == tagCapture && k[len(k)-9] == hostEnd:
		return fmt.Sprintf("capture key=%q time=%d", k[1:len(k)-9], int64(binary.BigEndian.Uint64(k[len(k)-8:])^1<<63)), true
	}
	return "", false
}
