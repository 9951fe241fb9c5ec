package warc

import (
	"errors"
	"fmt"
	"io"

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
	ResponseHeader []byte // the HTTP status line and header block
	Payload        []byte // the entity body; empty in a revisit
}

// ReadRecord reads the response or revisit record at offset in the WARC
// file at path (a Location's File, Offset), with github.com/nlnwa/gowarc,
// which checks its block and payload digests as it reads.
func ReadRecord(path string, offset int64) (Stored, error) {
	r, err := nlnwa.NewWarcFileReader(path, offset, readOptions()...)
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
	r, err := nlnwa.NewWarcFileReaderFromStream(struct{ io.Reader }{src}, 0, readOptions()...)
	if err != nil {
		return Stored{}, fmt.Errorf("warc: %w", err)
	}
	defer r.Close()
	return readOne(r, name, offset)
}

func readOptions() []nlnwa.WarcRecordOption {
	return []nlnwa.WarcRecordOption{
		nlnwa.WithSyntaxErrorPolicy(nlnwa.ErrFail), nlnwa.WithSpecViolationPolicy(nlnwa.ErrFail),
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
	}
	if s.Type != "response" && s.Type != "revisit" {
		return Stored{}, fmt.Errorf("warc: %s at %d: a %s record, not a response or revisit", path, offset, s.Type)
	}
	// Check the digests first: it caches the block, which is then read.
	if _, err := wr.ValidateDigest(); err != nil {
		return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, err)
	}
	if s.Type == "revisit" {
		// Its block is the response's header block alone.
		b, ok := wr.Block().(nlnwa.ProtocolHeaderBlock)
		if !ok {
			return Stored{}, fmt.Errorf("warc: %s at %d: the revisit of %s has no HTTP header block", path, offset, s.TargetURI)
		}
		s.ResponseHeader = b.ProtocolHeaderBytes()
		return s, nil
	}
	b, ok := wr.Block().(nlnwa.HttpResponseBlock)
	if !ok {
		return Stored{}, fmt.Errorf("warc: %s at %d: the block of %s is not an HTTP response", path, offset, s.TargetURI)
	}
	s.ResponseHeader = b.ProtocolHeaderBytes()
	p, err := b.PayloadBytes()
	if err != nil {
		return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, err)
	}
	if s.Payload, err = io.ReadAll(p); err != nil {
		return Stored{}, fmt.Errorf("warc: %s at %d: %w", path, offset, err)
	}
	return s, nil
}
