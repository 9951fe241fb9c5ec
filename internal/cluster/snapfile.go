package cluster

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/weft-crawler/weft/internal/seen"
)

// A snapshot file is a partition's two logs compacted below two stream
// sequences: for each URL, its first offer (links) and its last visit
// (done), the very messages, in the order of their URL keys. The order
// lets the next snapshot merge the file with the messages logged since
// in one pass, holding only those messages in memory.
//
// Layout, gzip-compressed: the line "weft snapshot 1", a JSON header and
// a newline, then records (a kind byte, the URL's 16-byte key, the
// message's length as a uvarint, the message), then an end record (kind
// 'E', the count of records before it as a uvarint). A file cut short
// has no end record and is refused.
const snapMagic = "weft snapshot 1\n"

const (
	kindLink  = 'L'
	kindVisit = 'V'
	kindEnd   = 'E'

	maxSnapRecord = 64 << 20 // NATS's largest max_payload: a length beyond it is corruption
)

// snapHeader says what a snapshot covers: partition Partition's messages
// of the links stream below LinksBelow and of the done stream below
// DoneBelow.
type snapHeader struct {
	Partition  int    `json:"partition"`
	LinksBelow uint64 `json:"links_below"`
	DoneBelow  uint64 `json:"done_below"`
}

// snapEntry is one URL's part of a snapshot: its first offer and its last
// visit, either possibly nil.
type snapEntry struct {
	Key   seen.Key
	Link  []byte
	Visit []byte
}

type snapWriter struct {
	zw            *gzip.Writer
	bw            *bufio.Writer
	records       uint64
	links, visits int
	buf           [binary.MaxVarintLen64]byte
}

func newSnapWriter(w io.Writer, h snapHeader) (*snapWriter, error) {
	zw := gzip.NewWriter(w)
	bw := bufio.NewWriterSize(zw, 64<<10)
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	bw.WriteString(snapMagic)
	bw.Write(hb)
	bw.WriteByte('\n')
	return &snapWriter{zw: zw, bw: bw}, nil
}

// add writes an entry; entries must come in the order of their keys.
func (sw *snapWriter) add(e snapEntry) error {
	if len(e.Link) > maxSnapRecord || len(e.Visit) > maxSnapRecord {
		return fmt.Errorf("snapshot: a message of %d bytes, over %d", max(len(e.Link), len(e.Visit)), maxSnapRecord)
	}
	if e.Link != nil {
		sw.record(kindLink, e.Key, e.Link)
		sw.links++
	}
	if e.Visit != nil {
		sw.record(kindVisit, e.Key, e.Visit)
		sw.visits++
	}
	// bufio keeps the first error and returns it from every later call.
	_, err := sw.bw.Write(nil)
	return err
}

func (sw *snapWriter) record(kind byte, k seen.Key, data []byte) {
	sw.bw.WriteByte(kind)
	sw.bw.Write(k[:])
	sw.bw.Write(sw.buf[:binary.PutUvarint(sw.buf[:], uint64(len(data)))])
	sw.bw.Write(data)
	sw.records++
}

// close writes the end record and finishes the compressed stream (not
// the writer under it).
func (sw *snapWriter) close() error {
	sw.bw.WriteByte(kindEnd)
	sw.bw.Write(sw.buf[:binary.PutUvarint(sw.buf[:], sw.records)])
	if err := sw.bw.Flush(); err != nil {
		return err
	}
	return sw.zw.Close()
}

type snapReader struct {
	name    string // for errors
	h       snapHeader
	zr      *gzip.Reader
	br      *bufio.Reader
	records uint64
	peeked  *snapRecord
	ended   bool
}

type snapRecord struct {
	kind byte
	key  seen.Key
	data []byte
}

// openSnap reads a snapshot's header; name says which file in errors.
func openSnap(r io.Reader, name string) (*snapReader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", name, err)
	}
	sr := &snapReader{name: name, zr: zr, br: bufio.NewReaderSize(zr, 64<<10)}
	magic := make([]byte, len(snapMagic))
	if _, err := io.ReadFull(sr.br, magic); err != nil || string(magic) != snapMagic {
		return nil, fmt.Errorf("snapshot %s: not a weft snapshot (want %q first)", name, strings.TrimSpace(snapMagic))
	}
	line, err := sr.br.ReadBytes('\n')
	if err != nil {
		return nil, sr.fail(err)
	}
	if err := json.Unmarshal(line, &sr.h); err != nil {
		return nil, fmt.Errorf("snapshot %s: header: %w", name, err)
	}
	return sr, nil
}

func (sr *snapReader) fail(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // no end record: cut short
	}
	return fmt.Errorf("snapshot %s: after %d records: %w", sr.name, sr.records, err)
}

// record reads the next record; io.EOF after the end record.
func (sr *snapReader) record() (snapRecord, error) {
	if p := sr.peeked; p != nil {
		sr.peeked = nil
		return *p, nil
	}
	if sr.ended {
		return snapRecord{}, io.EOF
	}
	kind, err := sr.br.ReadByte()
	if err != nil {
		return snapRecord{}, sr.fail(err)
	}
	switch kind {
	case kindEnd:
		n, err := binary.ReadUvarint(sr.br)
		if err != nil {
			return snapRecord{}, sr.fail(err)
		}
		if n != sr.records {
			return snapRecord{}, sr.fail(fmt.Errorf("the end record counts %d records", n))
		}
		if _, err := sr.br.ReadByte(); err != io.EOF {
			return snapRecord{}, sr.fail(errors.New("bytes after the end record"))
		}
		sr.ended = true
		return snapRecord{}, io.EOF
	case kindLink, kindVisit:
	default:
		return snapRecord{}, sr.fail(fmt.Errorf("unknown record kind %q", kind))
	}
	r := snapRecord{kind: kind}
	if _, err := io.ReadFull(sr.br, r.key[:]); err != nil {
		return snapRecord{}, sr.fail(err)
	}
	n, err := binary.ReadUvarint(sr.br)
	if err != nil {
		return snapRecord{}, sr.fail(err)
	}
	if n > maxSnapRecord {
		return snapRecord{}, sr.fail(fmt.Errorf("a record of %d bytes", n))
	}
	r.data = make([]byte, n)
	if _, err := io.ReadFull(sr.br, r.data); err != nil {
		return snapRecord{}, sr.fail(err)
	}
	sr.records++
	return r, nil
}

// next reads the next URL's entry; io.EOF after the last. Entries out of
// key order are refused: the merge depends on it.
func (sr *snapReader) next(prev *seen.Key) (snapEntry, error) {
	r, err := sr.record()
	if err != nil {
		return snapEntry{}, err
	}
	if prev != nil && bytes.Compare(r.key[:], prev[:]) <= 0 {
		return snapEntry{}, sr.fail(errors.New("records out of key order"))
	}
	e := snapEntry{Key: r.key}
	for {
		switch r.kind {
		case kindLink:
			if e.Link != nil || e.Visit != nil {
				return snapEntry{}, sr.fail(errors.New("records out of order"))
			}
			e.Link = r.data
		case kindVisit:
			if e.Visit != nil {
				return snapEntry{}, sr.fail(errors.New("two visits of one URL"))
			}
			e.Visit = r.data
		}
		r, err = sr.record()
		if errors.Is(err, io.EOF) {
			return e, nil
		}
		if err != nil {
			return snapEntry{}, err
		}
		if r.key != e.Key {
			sr.peeked = &r
			return e, nil
		}
	}
}

// each calls fn with every entry, in order.
func (sr *snapReader) each(fn func(snapEntry) error) error {
	var prev *seen.Key
	for {
		e, err := sr.next(prev)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := fn(e); err != nil {
			return err
		}
		prev = &e.Key
	}
}

// snapTail is what was logged since a snapshot, by URL key: the first
// offer and the last visit seen in the range read.
type snapTail map[seen.Key]*snapEntry

func (t snapTail) entry(k seen.Key) *snapEntry {
	e := t[k]
	if e == nil {
		e = &snapEntry{Key: k}
		t[k] = e
	}
	return e
}

// mergeSnap writes base (nil: none) and tail as one snapshot, until ctx
// is done: a URL's first offer is the base's if it has one (the links log
// keeps the first offer; an offer after a purge is a later one), its last
// visit the tail's if it has one.
func mergeSnap(ctx context.Context, base *snapReader, tail snapTail, w *snapWriter) error {
	keys := make([]seen.Key, 0, len(tail))
	for k := range tail {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b seen.Key) int { return bytes.Compare(a[:], b[:]) })
	i := 0
	flushBelow := func(k *seen.Key) error {
		for ; i < len(keys) && (k == nil || bytes.Compare(keys[i][:], k[:]) < 0); i++ {
			if err := w.add(*tail[keys[i]]); err != nil {
				return err
			}
		}
		return nil
	}
	if base != nil {
		n := 0
		err := base.each(func(e snapEntry) error {
			if n++; n%4096 == 0 && ctx.Err() != nil {
				return ctx.Err() // a release waits for this
			}
			if err := flushBelow(&e.Key); err != nil {
				return err
			}
			if i < len(keys) && keys[i] == e.Key {
				t := tail[keys[i]]
				if e.Link == nil {
					e.Link = t.Link
				}
				if t.Visit != nil {
					e.Visit = t.Visit
				}
				i++
			}
			return w.add(e)
		})
		if err != nil {
			return err
		}
	}
	return flushBelow(nil)
}
