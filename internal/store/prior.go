package store

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The host prior table (continuous mode): one record per host whose pages
// were visited twice or more, what its pages' visits showed pooled
// (package recrawl's HostPrior), so that a restart starts a new page of
// the host from what the host has shown rather than from the configured
// prior.
//
//	Prior: 'P' part host 0x00 -> PriorRecord
const (
	tagPrior     = 'P'
	priorVersion = 1
)

// PriorRecord is a host's pooled change history: decayed counts of its
// pages' visit intervals, of those that found a change, and their seconds.
type PriorRecord struct {
	Visits, Changes, Span float64
}

func appendPriorKey(dst []byte, part uint16, host string) []byte {
	return appendHostPrefix(dst, tagPrior, part, host)
}

// PutPrior writes the prior record of host.
func (b *Batch) PutPrior(part uint16, host string, r PriorRecord) {
	if !b.ok() {
		return
	}
	if err := checkHost(host); err != nil {
		b.fail(err)
		return
	}
	b.key = appendPriorKey(b.key[:0], part, host)
	b.val = append(b.val[:0], priorVersion)
	for _, f := range [...]float64{r.Visits, r.Changes, r.Span} {
		b.val = binary.BigEndian.AppendUint64(b.val, math.Float64bits(f))
	}
	b.set(b.key, b.val)
}

// GetPrior returns the prior record of host, and false if there is none.
func (db *DB) GetPrior(part uint16, host string) (PriorRecord, bool, error) {
	if err := checkHost(host); err != nil {
		return PriorRecord{}, false, fmt.Errorf("store %s: %w", db.dir, err)
	}
	key := appendPriorKey(nil, part, host)
	var r PriorRecord
	ok, err := db.get(key, func(val []byte) error {
		d := decoder{b: val}
		d.version(priorVersion)
		for _, f := range []*float64{&r.Visits, &r.Changes, &r.Span} {
			if d.err == nil && len(d.b)-d.off >= 8 {
				*f = math.Float64frombits(binary.BigEndian.Uint64(d.b[d.off:]))
				d.off += 8
			} else {
				d.fail("prior")
			}
		}
		return d.finish(key)
	})
	return r, ok, err
}
