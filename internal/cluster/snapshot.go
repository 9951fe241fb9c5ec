package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	wjs "github.com/weft-crawler/weft/internal/jetstream"
	"github.com/weft-crawler/weft/internal/seen"
)

// Snapshots: the owner of a partition compacts the partition's two logs
// now and then into one file (snapfile.go) in object storage, records it
// in the key-value bucket WEFT_SNAPS (key p.<partition>, written at the
// revision read, so that two writers cannot both win), and then purges
// the messages the file covers. A new owner reads the file and then the
// logs from where it ends. The file is made from the logs, not from the
// node's store, so it is right whoever makes it; the owner makes it only
// from URLs its consumer has offered already, since the purge takes them
// from the log.
const (
	SnapsBucket   = "WEFT_SNAPS"
	ObjectsBucket = "WEFT_SNAPSHOTS" // the JetStream object store used when no other is given
)

// Snapshots is where snapshot files are kept: objstore.Store (S3) or a
// JetStream object store. String names the store, the same on every node
// (a snapshot records it, for a clear error on a node given another).
type Snapshots interface {
	Put(ctx context.Context, name string, r io.Reader, size int64) error
	Get(ctx context.Context, name string) (io.ReadCloser, error)
	Delete(ctx context.Context, name string) error
	String() string
}

// Defaults of Config.SnapshotEvery and SnapshotAfter.
const (
	DefaultSnapshotEvery = 10 * time.Minute
	DefaultSnapshotAfter = 50_000
)

// snapPointer is a partition's snapshot, as WEFT_SNAPS records it.
type snapPointer struct {
	Store      string    `json:"store"` // Snapshots.String of where Object is
	Object     string    `json:"object"`
	Size       int64     `json:"size"`
	SHA256     string    `json:"sha256"`
	LinksBelow uint64    `json:"links_below"`
	DoneBelow  uint64    `json:"done_below"`
	Links      int       `json:"links"`
	Visits     int       `json:"visits"`
	Node       string    `json:"node"`
	Made       time.Time `json:"made"`
}

// partSnap is what a node knows of the snapshot of a partition it holds.
type partSnap struct {
	mu   sync.Mutex // held while the partition is snapshotted or a snapshot is read into the crawl
	rev  uint64     // WEFT_SNAPS revision of ptr; 0: no snapshot
	ptr  snapPointer
	base string // the local copy of ptr's file; "" if none

	last atomic.Int64 // when the partition was last snapshotted (or taken), in Unix nanoseconds

	lost    bool        // the record was deleted: it is made again, whether or not the logs grew
	pending snapPointer // a snapshot whose record write had no answer: it may yet land

	grown     atomic.Int64  // messages logged in the partition since ptr (an estimate: it decides when, not what)
	linksNext atomic.Uint64 // every links message below it has been offered to the crawl
}

func snapKey(p int) string { return "p." + strconv.Itoa(p) }

// basePath is where the node keeps its copy of partition p's snapshot.
func (n *Node) basePath(p int) string {
	return filepath.Join(n.snapDir, "p"+strconv.Itoa(p)+".wsnap")
}

// readPointer returns partition p's snapshot pointer and its revision
// (0: none yet), as the bucket's leader has it (jetstream.LastMsg): an
// older pointer than the purges made would lose what they took.
func (n *Node) readPointer(ctx context.Context, p int) (snapPointer, uint64, error) {
	m, ok, err := wjs.LastMsg(ctx, n.js, wjs.KVStream(SnapsBucket), wjs.KVSubject(SnapsBucket, snapKey(p)))
	if err != nil || !ok || wjs.KVDeleted(m.Header) {
		return snapPointer{}, 0, err
	}
	var ptr snapPointer
	if err := json.Unmarshal(m.Data, &ptr); err != nil {
		return snapPointer{}, 0, fmt.Errorf("%s %s: %w", SnapsBucket, snapKey(p), err)
	}
	return ptr, m.Sequence, nil
}

// fetchSnapshot makes the node's copy of ptr's file, checked against its
// size and SHA-256; a copy already there with that sum is kept.
func (n *Node) fetchSnapshot(ctx context.Context, p int, ptr snapPointer) (string, error) {
	path := n.basePath(p)
	if sum, size, err := fileSum(path); err == nil && sum == ptr.SHA256 && size == ptr.Size {
		return path, nil
	}
	if ptr.Store != n.objects.String() {
		return "", fmt.Errorf("snapshot %s is in the %s, and this node keeps snapshots in the %s: give every node of the crawl the same object store (--s3-*)", ptr.Object, ptr.Store, n.objects)
	}
	r, err := n.getObject(ctx, ptr.Object, ptr.Size)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", ptr.Object, err)
	}
	defer r.Close()
	tmp, err := os.CreateTemp(n.snapDir, "fetch-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	h := sha256.New()
	size, err := io.Copy(io.MultiWriter(tmp, h), r)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", ptr.Object, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != ptr.SHA256 || size != ptr.Size {
		return "", fmt.Errorf("snapshot %s: %d bytes of SHA-256 %s, but %s records %d bytes of %s", ptr.Object, size, sum, SnapsBucket, ptr.Size, ptr.SHA256)
	}
	if err := checkHeader(tmp.Name(), p, ptr); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", err
	}
	return path, nil
}

// checkHeader checks that a snapshot file is the one ptr records for
// partition p (its sum proves its bytes, not that it is the right file).
func checkHeader(path string, p int, ptr snapPointer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sr, err := openSnap(f, ptr.Object)
	if err != nil {
		return err
	}
	if want := (snapHeader{Partition: p, LinksBelow: ptr.LinksBelow, DoneBelow: ptr.DoneBelow}); sr.h != want {
		return fmt.Errorf("snapshot %s covers %+v, its record in %s says %+v", ptr.Object, sr.h, SnapsBucket, want)
	}
	return nil
}

// loadSnapshot reads partition p's snapshot, if it has one, and adopts
// its visits into the crawl (acquire offers its URLs later, after the
// visits logged since).
func (n *Node) loadSnapshot(ctx context.Context, p int) (*partSnap, int, error) {
	ps := &partSnap{}
	ps.last.Store(time.Now().UnixNano())
	ptr, rev, err := n.readPointer(ctx, p)
	if err != nil || rev == 0 {
		return ps, 0, err
	}
	path, err := n.fetchSnapshot(ctx, p, ptr)
	if err != nil {
		return nil, 0, err
	}
	visits, err := n.applySnapshot(ctx, path, true, false)
	if err != nil {
		return nil, 0, err
	}
	ps.rev, ps.ptr, ps.base = rev, ptr, path
	ps.linksNext.Store(ptr.LinksBelow)
	return ps, visits, nil
}

// applySnapshot adopts a snapshot file's visits, offers its URLs, or
// both, in batches, until ctx is done; it returns how many it passed on.
func (n *Node) applySnapshot(ctx context.Context, path string, visits, links bool) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sr, err := openSnap(f, path)
	if err != nil {
		return 0, err
	}
	var vs []crawl.Visited
	var offers []crawl.Offered
	count := 0
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err // the partition is given up: the rest is not the crawl's any more
		}
		count += len(vs) + len(offers)
		var err error
		if len(vs) > 0 {
			err = n.in.Adopt(vs)
		}
		if len(offers) > 0 && err == nil {
			err = n.in.Offer(offers)
		}
		vs, offers = vs[:0], offers[:0]
		return err
	}
	err = sr.each(func(e snapEntry) error {
		if visits && e.Visit != nil {
			var v crawl.Visited
			if json.Unmarshal(e.Visit, &v) == nil && v.URL != "" {
				vs = append(vs, v)
			}
		}
		if links && e.Link != nil {
			var o crawl.Offered
			if json.Unmarshal(e.Link, &o) == nil && o.URL != "" {
				offers = append(offers, o)
			}
		}
		if len(vs)+len(offers) >= 1000 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return count, err
}

// snapshotLoop snapshots the partitions the node has taken, one at a
// time, each once its logs have grown by SnapshotAfter messages or
// SnapshotEvery after its last (if they grew; in any case the node looks
// for a snapshot another node made).
//
// A node that makes none (SnapshotEvery negative) still looks for those
// of others, every Config.lookEvery.
func (n *Node) snapshotLoop() {
	makes, every := n.cfg.SnapshotEvery > 0, n.cfg.SnapshotEvery
	if !makes {
		every = n.cfg.lookEvery
	}
	tick := min(every/4, time.Second)
	for {
		select {
		case <-time.After(tick):
		case <-n.life.Done():
			return
		}
		n.mu.Lock()
		due := map[int]*taking{}
		for p, tk := range n.consumers {
			if tk.snap == nil {
				continue // its past is still being read
			}
			grown, last := tk.snap.grown.Load(), time.Unix(0, tk.snap.last.Load())
			if (makes && grown >= int64(n.cfg.SnapshotAfter)) || time.Since(last) >= every {
				due[p] = tk
			}
		}
		n.mu.Unlock()
		for p, tk := range due {
			job, err := n.snapshot(tk.ctx, p, tk.snap, makes)
			if err != nil && tk.ctx.Err() == nil {
				n.log.Warn("cluster: partition not snapshotted; its logs are kept until the next try", "partition", p, "err", err)
			}
			if job != nil {
				n.purge(job)
			}
		}
	}
}

// snapshot compacts partition p's logs since its last snapshot into a new
// one (if write), records it, and purges what it covers. A snapshot
// recorded by another node meanwhile (an owner that lost the partition
// without knowing yet) is read into the crawl instead: it may have purged
// messages this node's consumer had not reached.
//
// The purge of what the new snapshot covers is returned, for the caller
// to make once ps is unlocked: a release waits for ps, not for the purge.
func (n *Node) snapshot(ctx context.Context, p int, ps *partSnap, write bool) (*purgeJob, error) {
	if _, _, ok := n.owners.Valid(p); !ok {
		return nil, nil // being handed over, or not provably held: not this node's to snapshot now
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	ptr, rev, err := n.readPointer(ctx, p)
	if err != nil {
		return nil, err
	}
	if rev == 0 && ps.rev != 0 {
		// The record was deleted (by hand?): a new owner would replay the
		// logs without what was purged. It is made again from this node's
		// copy, which has all of it.
		n.log.Warn("cluster: the record of a partition's snapshot is gone; it is made again", "partition", p, "bucket", SnapsBucket)
		ps.rev, ps.lost = 0, true
	}
	if rev != ps.rev {
		path, err := n.fetchSnapshot(ctx, p, ptr)
		if err != nil {
			return nil, err
		}
		if mine := ps.pending; ptr.Object == mine.Object && ptr.SHA256 == mine.SHA256 {
			// This node's own write, whose answer was lost, landed: its
			// file has what the node has.
			n.log.Info("cluster: a snapshot whose record was not confirmed was recorded", "partition", p, "object", ptr.Object)
		} else {
			read, err := n.applySnapshot(ctx, path, true, true)
			if err != nil {
				return nil, err
			}
			n.log.Warn("cluster: a snapshot by another node read in", "partition", p, "node", ptr.Node, "object", ptr.Object, "records", read)
		}
		ps.rev, ps.ptr, ps.base, ps.pending = rev, ptr, path, snapPointer{}
		return nil, nil
	}
	if !write {
		ps.last.Store(time.Now().UnixNano())
		return nil, nil
	}
	if ps.ptr.Object != "" && ps.base == "" {
		// The node's copy of the last snapshot was lost: the new one is
		// made from it, never without it.
		path, err := n.fetchSnapshot(ctx, p, ps.ptr)
		if err != nil {
			return nil, err
		}
		ps.base = path
	}

	// What was logged since, below the links the consumer has offered
	// and the visits logged by now, at most Config.snapTailMax messages.
	tail := snapTail{}
	read := 0
	linksBelow := max(ps.linksNext.Load(), ps.ptr.LinksBelow)
	if linksBelow > ps.ptr.LinksBelow {
		last, err := n.readRange(ctx, LinksStream, linksPrefix(p), ps.ptr.LinksBelow, linksBelow, &read, func(k seen.Key, data []byte) {
			if e := tail.entry(k); e.Link == nil {
				e.Link = data
			}
		})
		if err != nil {
			return nil, err
		}
		linksBelow = last + 1
	}
	doneBelow := ps.ptr.DoneBelow
	if st, err := n.js.Stream(ctx, DoneStream); err != nil {
		return nil, err
	} else if info, err := st.Info(ctx); err != nil {
		return nil, err
	} else if end := info.State.LastSeq + 1; end > doneBelow && read < n.cfg.snapTailMax {
		last, err := n.readRange(ctx, DoneStream, donePrefix(p), doneBelow, end, &read, func(k seen.Key, data []byte) {
			tail.entry(k).Visit = data
		})
		if err != nil {
			return nil, err
		}
		doneBelow = last + 1
	}
	if read == 0 && !ps.lost {
		ps.last.Store(time.Now().UnixNano())
		ps.grown.Store(0) // the estimate was off: nothing was logged
		return nil, nil
	}

	// The new file: the last one merged with the tail.
	tmp, err := os.CreateTemp(n.snapDir, "make-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(tmp, h)}
	w, err := newSnapWriter(cw, snapHeader{Partition: p, LinksBelow: linksBelow, DoneBelow: doneBelow})
	if err != nil {
		tmp.Close()
		return nil, err
	}
	var base *snapReader
	if ps.base != "" {
		bf, err := os.Open(ps.base)
		if err != nil {
			tmp.Close()
			return nil, err
		}
		defer bf.Close()
		if base, err = openSnap(bf, ps.base); err != nil {
			tmp.Close()
			return nil, err
		}
	}
	err = mergeSnap(ctx, base, tail, w)
	if err == nil {
		err = w.close()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	next := snapPointer{
		Store: n.objects.String(),
		// The random part keeps two crawls that share a bucket apart.
		Object: fmt.Sprintf("snapshots/p%d/%s-%d-%d-%s.wsnap", p, n.cfg.Node, linksBelow, doneBelow, randomHex(4)),
		Size:   cw.n, SHA256: hex.EncodeToString(h.Sum(nil)),
		LinksBelow: linksBelow, DoneBelow: doneBelow, Links: w.links, Visits: w.visits,
		Node: n.cfg.Node, Made: time.Now().UTC(),
	}

	// Stored (each store checks what it takes: S3 the MD5 of each part,
	// JetStream acknowledges every chunk from a quorum), then recorded
	// with its SHA-256, which every reader checks.
	f, err := os.Open(tmp.Name())
	if err != nil {
		return nil, err
	}
	err = n.objects.Put(ctx, next.Object, f, next.Size)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", next.Object, err)
	}
	// Recorded while the node can prove it holds the partition, and at
	// the revision it read.
	_, until, ok := n.owners.Valid(p)
	if !ok {
		n.dropObject(ctx, next.Object)
		return nil, errors.New("the lease is not valid")
	}
	rctx, rcancel := context.WithDeadline(ctx, until)
	defer rcancel()
	b, _ := json.Marshal(next)
	if ps.rev == 0 {
		rev, err = n.snaps.Create(rctx, snapKey(p), b)
	} else {
		rev, err = n.snaps.Update(rctx, snapKey(p), b, ps.rev)
	}
	if err != nil {
		// A write whose answer was lost may have been made: the record
		// says. The object goes only once the record has moved past the
		// revision written at, so that this write can no longer land.
		cctx, ccancel := context.WithTimeout(n.life, 30*time.Second)
		defer ccancel()
		now, nowRev, rerr := n.readPointer(cctx, p)
		switch {
		case rerr == nil && nowRev != 0 && now.Object == next.Object:
			rev, err = nowRev, nil
		case rerr == nil && nowRev != ps.rev:
			n.dropObject(cctx, next.Object)
		default: // it may yet land: kept, and known as this node's if it does
			ps.pending = next
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", SnapsBucket, snapKey(p), err)
		}
	}
	old := ps.ptr
	if err := os.Rename(tmp.Name(), n.basePath(p)); err != nil {
		ps.base = "" // fetched again before the next snapshot is made
	} else {
		ps.base = n.basePath(p)
	}
	ps.rev, ps.ptr = rev, next
	ps.last.Store(time.Now().UnixNano())
	ps.grown.Add(-int64(read))
	n.snapshots.Add(1)
	n.log.Info("cluster: partition snapshotted", "partition", p, "object", next.Object, "bytes", next.Size,
		"urls", next.Links, "visits", next.Visits, "messages_read", read)
	ps.lost, ps.pending = false, snapPointer{}
	return &purgeJob{p: p, linksBelow: linksBelow, doneBelow: doneBelow, old: old.Object}, nil
}

// purgeJob is what a snapshot recorded lets go: the partition's messages
// below two sequences, and the snapshot it replaced.
type purgeJob struct {
	p                     int
	linksBelow, doneBelow uint64
	old                   string
}

// purge removes what a recorded snapshot covers from the logs, even if
// the partition is being handed over meanwhile (only a crash stops it); a
// purge that fails is done by the next one (it purges below its own,
// higher, sequences).
func (n *Node) purge(job *purgeJob) {
	ctx, cancel := context.WithTimeout(n.life, time.Minute)
	defer cancel()
	for _, pg := range []struct {
		stream, subject string
		below           uint64
	}{{LinksStream, linksPrefix(job.p) + ".>", job.linksBelow}, {DoneStream, donePrefix(job.p) + ".>", job.doneBelow}} {
		if pg.below == 0 {
			// The snapshot covers none of this log (made before its owner
			// had read any of it). JetStream takes a purge up to sequence
			// 0 for a purge with no bound: every message of the partition.
			continue
		}
		st, err := n.js.Stream(ctx, pg.stream)
		if err == nil {
			err = st.Purge(ctx, jetstream.WithPurgeSubject(pg.subject), jetstream.WithPurgeSequence(pg.below))
		}
		if err != nil {
			n.log.Warn("cluster: logs not purged below a snapshot; the next one will", "partition", job.p, "stream", pg.stream, "err", err)
		}
	}
	if job.old != "" {
		if err := n.objects.Delete(ctx, job.old); err != nil {
			n.log.Warn("cluster: an old snapshot not deleted", "object", job.old, "err", err)
		}
	}
}

// readRange reads the messages of prefix's subjects from stream sequence
// from up to below (0: the start; below not included), while *read is
// under Config.snapTailMax, and returns the sequence of the last one
// read (from-1 if none).
func (n *Node) readRange(ctx context.Context, stream, prefix string, from, below uint64, read *int, fn func(seen.Key, []byte)) (uint64, error) {
	last := max(from, 1) - 1
	err := n.replay(ctx, stream, prefix+".>", from, func(m jetstream.Msg) bool {
		md, err := m.Metadata()
		if err != nil || md.Sequence.Stream >= below || *read >= n.cfg.snapTailMax {
			return false
		}
		var k seen.Key
		b, err := hex.DecodeString(m.Subject()[strings.LastIndexByte(m.Subject(), '.')+1:])
		if err != nil || len(b) != len(k) {
			return false // not weft's: the snapshot stops before it, and the purge with it
		}
		copy(k[:], b)
		fn(k, m.Data())
		last = md.Sequence.Stream
		*read++
		return true
	})
	return last, err
}
