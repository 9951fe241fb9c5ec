package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/seen"
	"github.com/weft-crawler/weft/internal/synthweb"
	"github.com/weft-crawler/weft/internal/testwait"
)

func snapshotsOften(c *Config) {
	c.SnapshotEvery = 300 * time.Millisecond
	c.SnapshotAfter = 40
}

// TestSnapshotTakeover: node a crawls alone, snapshotting its partitions
// often, and is killed mid-crawl; by then the messages its snapshots
// cover are purged from the logs. Node b takes every partition over from
// the snapshots and the logs left, and finishes: every page is fetched,
// none twice but what a had in flight. Last, each partition's snapshot
// (b's, merged with a's) and its logs together hold every page fetched,
// as a URL and as a visit.
func TestSnapshotTakeover(t *testing.T) {
	ns := startNATS(t)
	web := startWeb(t, synthweb.Config{Seed: 29, Hosts: 16, PagesPerHost: 12, MinLinks: 15, MaxLinks: 25,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound, synthweb.RobotsRules}})

	// A longer delay than the other tests': a crawls for seconds, not
	// for the time a slow machine takes to make its first snapshots.
	const delay = 150 * time.Millisecond
	slower := func(c *crawl.Config) { c.Delay = delay }
	// Leases of 10 s, not testTTL's 2 s: a node fences itself when its
	// renewals are TTL/2 late (1 s at 2 s), which a loaded machine
	// reaches, and a node that fenced itself takes its partitions back
	// and fetches again the pages it had in flight. Under stress b
	// fenced itself 8 to 51 times in some runs, and those runs (and only
	// those) went over the "none twice but a's 4 leases at the kill"
	// this test counts. The TTL bounds how long b waits for a's
	// partitions after the kill (about 10 s here), not what is judged.
	snapshotsLeased := func(c *Config) {
		snapshotsOften(c)
		c.TTL = 10 * time.Second
	}
	a := startNodeConfig(t, ns, web, "a", 4, slower, snapshotsLeased)
	waitProgress(t, web, 0.2)
	testwait.EventuallyNil(t, time.Minute, fmt.Sprintf("%d snapshots by a", testParts), func() error {
		if made := a.node.snapshots.Load(); made < testParts {
			return fmt.Errorf("a made %d", made)
		}
		return nil
	})
	waitProgress(t, web, 0.4)
	a.cancel()
	a.node.Kill()
	<-a.done
	a.nc.Close()
	before := pageRequests(web)

	_, js := natstest.Connect(t, ns.ClientURL())
	ctx := t.Context()
	covered := 0
	for p := range testParts {
		if readPointerT(t, js, p).Node == "a" {
			covered++
		}
	}
	if covered == 0 {
		t.Fatal("no partition has a snapshot of a's")
	}

	b := startNodeConfig(t, ns, web, "b", 4, slower, snapshotsLeased)
	waitProgress(t, web, 1)
	b.node.Stop(context.Background())
	b.cancel()
	<-b.done
	if err := web.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	fetched := pageRequests(web)
	twice := 0
	for u, n := range fetched {
		if n > 1 {
			twice++
			t.Logf("%s fetched %d times (%d before the kill)", u, n, before[u])
		}
	}
	if twice > 4 {
		t.Errorf("%d pages fetched twice, more than a's 4 leases out at the kill", twice)
	}
	if b.node.snapshots.Load() == 0 {
		t.Error("b made no snapshot")
	}
	_, want := progress(web)
	t.Logf("a made %d snapshots, b %d; a was killed at %d of %d pages", a.node.snapshots.Load(), b.node.snapshots.Load(), len(before), want)
	if len(before) > want*9/10 {
		t.Errorf("a fetched %d of %d pages before it was killed: too many for b to show it takes over", len(before), want)
	}
	audit := synthweb.Audit(web, delay)
	for _, s := range audit.Breaches() {
		t.Errorf("politeness: %s", s)
	}

	// What the snapshots cover is gone from the logs.
	for p := range testParts {
		ptr := readPointerT(t, js, p)
		for _, l := range []struct {
			stream, prefix string
			below          uint64
		}{{LinksStream, linksPrefix(p), ptr.LinksBelow}, {DoneStream, donePrefix(p), ptr.DoneBelow}} {
			if first := firstSeq(t, js, l.stream, l.prefix); first != 0 && first < l.below {
				t.Errorf("partition %d: %s still has message %d, below the snapshot's %d", p, l.stream, first, l.below)
			}
		}
	}

	// The snapshots' reads left no consumer behind: what remains is at
	// most the two nodes' readers of the partitions' URLs, which the
	// servers drop once idle, and a read of a's its kill cut short.
	consumers := 0
	for _, name := range []string{LinksStream, DoneStream} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		consumers += info.State.Consumers
	}
	if made := int(a.node.snapshots.Load() + b.node.snapshots.Load()); consumers > 3*testParts {
		t.Errorf("%d consumers left on the logs after %d snapshots", consumers, made)
	}

	// Each partition's snapshot and logs hold every page fetched there.
	links, visits := map[seen.Key]bool{}, map[seen.Key]bool{}
	obs, err := js.ObjectStore(ctx, ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	for p := range testParts {
		ptr := readPointerT(t, js, p)
		if ptr.Object == "" {
			continue
		}
		r, err := obs.Get(ctx, ptr.Object)
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		sr, err := openSnap(bytes.NewReader(b), ptr.Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := sr.each(func(e snapEntry) error {
			links[e.Key] = links[e.Key] || e.Link != nil
			visits[e.Key] = visits[e.Key] || e.Visit != nil
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if sr.h.Partition != p || sr.h.LinksBelow != ptr.LinksBelow || sr.h.DoneBelow != ptr.DoneBelow {
			t.Errorf("partition %d: snapshot header %+v, pointer %+v", p, sr.h, ptr)
		}
	}
	for _, l := range []struct {
		stream string
		into   map[seen.Key]bool
	}{{LinksStream, links}, {DoneStream, visits}} {
		for _, k := range subjectKeys(t, js, l.stream) {
			l.into[k] = true
		}
	}
	missing := 0
	for _, p := range web.AllPages() {
		if fetched[p.URL] == 0 {
			continue
		}
		k := seen.KeyOf(p.URL)
		if !links[k] || !visits[k] {
			missing++
			if missing < 5 {
				t.Errorf("%s fetched, but the cluster keeps it as a URL %v, as a visit %v", p.URL, links[k], visits[k])
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d pages fetched are missing from the snapshots and logs", missing)
	}
}

func readPointerT(t *testing.T, js jetstream.JetStream, p int) snapPointer {
	t.Helper()
	kv, err := js.KeyValue(t.Context(), SnapsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(t.Context(), snapKey(p))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return snapPointer{}
	}
	if err != nil {
		t.Fatal(err)
	}
	var ptr snapPointer
	if err := json.Unmarshal(e.Value(), &ptr); err != nil {
		t.Fatal(err)
	}
	return ptr
}

// firstSeq is the sequence of the first message of prefix's subjects in
// stream, 0 if none.
func firstSeq(t *testing.T, js jetstream.JetStream, stream, prefix string) uint64 {
	t.Helper()
	st, err := js.Stream(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(t.Context(), 1, jetstream.WithGetMsgSubject(prefix+".>")) // the first at or after 1
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return m.Sequence
}

// subjectKeys lists the URL keys of the subjects stream has messages on.
func subjectKeys(t *testing.T, js jetstream.JetStream, stream string) []seen.Key {
	t.Helper()
	st, err := js.Stream(t.Context(), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(t.Context(), jetstream.WithSubjectFilter(">"))
	if err != nil {
		t.Fatal(err)
	}
	var out []seen.Key
	for subj := range info.State.Subjects {
		var k seen.Key
		if b, err := hex.DecodeString(subj[len(subj)-2*len(k):]); err == nil {
			copy(k[:], b)
			out = append(out, k)
		}
	}
	return out
}

// TestForeignSnapshotReadIn: a snapshot another node records for a
// partition this node holds (an owner that lost the partition without
// knowing yet, whose purge may have taken URLs this node had not read) is
// read into the crawl: a URL only that snapshot holds is fetched. The
// node makes no snapshots of its own, and still looks.
func TestForeignSnapshotReadIn(t *testing.T) {
	ns := startNATS(t)
	web := startWeb(t, synthweb.Config{Seed: 30, Hosts: 3, PagesPerHost: 6, MinLinks: 10, MaxLinks: 12,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	a := startNodeConfig(t, ns, web, "a", 2, nil, func(c *Config) { c.SnapshotEvery, c.lookEvery = -1, 300*time.Millisecond })
	waitProgress(t, web, 1)

	_, js := natstest.Connect(t, ns.ClientURL())
	ctx := t.Context()
	kv, err := js.KeyValue(ctx, SnapsBucket)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(ctx, ObjectsBucket)
	if err != nil {
		t.Fatal(err)
	}
	target := "http://" + web.Hosts()[0].Authority + "/only-in-a-foreign-snapshot"
	p := partOf(target, testParts)
	link, _ := json.Marshal(crawl.Offered{URL: target, Depth: 1})
	var out bytes.Buffer
	w, err := newSnapWriter(&out, snapHeader{Partition: p, LinksBelow: 1, DoneBelow: 1})
	if err != nil {
		t.Fatal(err)
	}
	k := seen.KeyOf(target)
	if err := mergeSnap(ctx, nil, snapTail{k: {Key: k, Link: link}}, w); err != nil {
		t.Fatal(err)
	}
	if err := w.close(); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(out.Bytes())
	ptr := snapPointer{Store: natsObjects{obs}.String(), Object: fmt.Sprintf("snapshots/p%d/x-1-1.wsnap", p), Size: int64(out.Len()),
		SHA256: hex.EncodeToString(sum[:]), LinksBelow: 1, DoneBelow: 1, Links: 1, Node: "x", Made: time.Now()}
	if _, err := obs.Put(ctx, jetstream.ObjectMeta{Name: ptr.Object}, bytes.NewReader(out.Bytes())); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ptr)
	if _, err := kv.Create(ctx, snapKey(p), b); err != nil { // a made none: the partition has no snapshot yet
		t.Fatal(err)
	}
	waitLog(t, web, "the URL only the foreign snapshot holds", func(log []synthweb.Request) bool {
		return slices.ContainsFunc(log, func(r synthweb.Request) bool { return r.Path == "/only-in-a-foreign-snapshot" })
	})
	if a.node.snapshots.Load() != 0 {
		t.Errorf("a node told to make no snapshots made %d", a.node.snapshots.Load())
	}
}

// TestDeletedRecordMadeAgain: a snapshot's record deleted from WEFT_SNAPS
// (by hand, say) is written again by the partition's owner from its own
// copy, though nothing more is logged: without it, a new owner would
// replay logs that no longer hold what the snapshot covered.
func TestDeletedRecordMadeAgain(t *testing.T) {
	ns := startNATS(t)
	web := startWeb(t, synthweb.Config{Seed: 31, Hosts: 3, PagesPerHost: 6, MinLinks: 10, MaxLinks: 12,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	a := startNodeConfig(t, ns, web, "a", 2, nil, snapshotsOften)
	waitProgress(t, web, 1)
	_, js := natstest.Connect(t, ns.ClientURL())
	kv, err := js.KeyValue(t.Context(), SnapsBucket)
	if err != nil {
		t.Fatal(err)
	}
	// The crawl is done: wait until a partition's snapshot covers all of
	// its logs (the node counts nothing logged since), so that nothing
	// new would make another: only the deletion can.
	var key string
	var before snapPointer
	testwait.Eventually(t, 30*time.Second, "a partition snapshotted, nothing logged since", func() bool {
		for p := range testParts {
			if ptr := readPointerT(t, js, p); ptr.Object != "" && a.node.grownSince(p) == 0 {
				key, before = snapKey(p), ptr
				return true
			}
		}
		return false
	})
	made := a.node.snapshots.Load()
	if err := kv.Delete(t.Context(), key); err != nil {
		t.Fatal(err)
	}
	var after snapPointer
	testwait.EventuallyNil(t, 30*time.Second, key+" made again", func() error {
		e, err := kv.Get(t.Context(), key)
		if err == nil && json.Unmarshal(e.Value(), &after) == nil && after.Object != "" {
			return nil
		}
		return fmt.Errorf("deleted at %d snapshots; now %d", made, a.node.snapshots.Load())
	})
	if after.LinksBelow < before.LinksBelow || after.DoneBelow < before.DoneBelow || after.Links < before.Links || after.Visits < before.Visits {
		t.Errorf("the record made again covers less than the deleted one:\nbefore %+v\nafter  %+v", before, after)
	}
}

// grownSince is the node's count of partition p's messages logged since
// its last snapshot; -1 if its past is not read yet (or p not held).
func (n *Node) grownSince(p int) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if tk := n.consumers[p]; tk != nil && tk.snap != nil {
		return tk.snap.grown.Load()
	}
	return -1
}

// objectStore starts a NATS server with JetStream's object store as
// Snapshots, holding one object of size bytes, "big".
func objectStore(t *testing.T, size int) (*server.Server, *Node, []byte) {
	t.Helper()
	srv := startNATS(t)
	_, js := natstest.Connect(t, srv.ClientURL(), nats.MaxReconnects(-1))
	obs, err := js.CreateObjectStore(t.Context(), jetstream.ObjectStoreConfig{Bucket: ObjectsBucket})
	if err != nil {
		t.Fatal(err)
	}
	n := &Node{objects: natsObjects{obs}}
	n.cfg.setKnobs()
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 7 / 3)
	}
	if err := n.objects.Put(t.Context(), "big", bytes.NewReader(body), int64(size)); err != nil {
		t.Fatal(err)
	}
	return srv, n, body
}

// TestObjectReadEndsWhenStalled: a snapshot being read from JetStream's
// object store when its server goes away ends once the object has had its
// time (Config.objectIdle plus its size at objectRate), though its caller's
// deadline (a takeover's) is minutes away: nats.go waits for a chunk until
// its context's deadline, and a read that waited for that deadline held
// the partition's release behind it.
func TestObjectReadEndsWhenStalled(t *testing.T) {
	srv, n, _ := objectStore(t, 16<<20)                     // far more than the client takes in before it is read
	n.cfg.objectIdle, n.cfg.objectRate = time.Second, 8<<20 // 16 MiB: 3 s in all
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	r, err := n.getObject(ctx, "big", 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	srv.Shutdown() // the rest never comes
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, r)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the read ended without an error, its object not whole")
		}
		r.Close()
	case <-time.After(time.Minute):
		// Not closed: a close waits for the read.
		t.Fatal("the read still waits a minute after its server went away (its time was 3 s)")
	}
}

// TestObjectReadSlowerThanFiveSeconds: a snapshot read over more than 5 s
// (a big one, a slow disk) is read whole: nats.go gives a read without a
// deadline 5 s for the whole object, so getObject gives it one.
func TestObjectReadSlowerThanFiveSeconds(t *testing.T) {
	_, n, body := objectStore(t, 4<<20)
	r, err := n.getObject(t.Context(), "big", 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got := make([]byte, 1024)
	if _, err := io.ReadFull(r, got); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // the reader is slow
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("a read resumed after 6 s: %v", err)
	}
	if !bytes.Equal(append(got, rest...), body) {
		t.Errorf("read %d bytes, not the %d stored", len(got)+len(rest), len(body))
	}
}

// TestPurgeBelowNothingKeepsTheLog: a snapshot made before its owner had
// read any of the partition's URLs covers none of them (links below 0),
// and its purge must take none. JetStream takes a purge up to sequence 0
// for a purge with no bound, and the whole of the partition's log went:
// URLs forwarded to it that no snapshot held were lost, and their pages
// never fetched (seen in TestClusterAcceptance, the partitions of a
// killed node taken over by one that had just joined).
func TestPurgeBelowNothingKeepsTheLog(t *testing.T) {
	ns := startNATS(t)
	web := startWeb(t, synthweb.Config{Seed: 31, Hosts: 2, PagesPerHost: 12, RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	a := startNodeOpts(t, ns, web, "a", 1, nil, func(c *Config) { c.SnapshotEvery = -1 }, true)
	_, js := natstest.Connect(t, ns.ClientURL())
	ctx := t.Context()
	target := "http://" + web.Hosts()[0].Authority + "/kept-through-an-empty-purge"
	p := partOf(target, testParts)
	link, _ := json.Marshal(crawl.Offered{URL: target, Depth: 1})
	visit, _ := json.Marshal(crawl.Visited{URL: target})
	logs := []struct{ stream, subject string }{
		{LinksStream, urlSubject(linksPrefix(p), target)},
		{DoneStream, urlSubject(donePrefix(p), target)},
	}
	for i, body := range [][]byte{link, visit} {
		if _, err := js.Publish(ctx, logs[i].subject, body); err != nil {
			t.Fatal(err)
		}
	}
	a.node.purge(&purgeJob{p: p}) // a snapshot below sequence 0 of both logs
	seqs := make([]uint64, len(logs))
	for i, lg := range logs {
		st, err := js.Stream(ctx, lg.stream)
		if err != nil {
			t.Fatal(err)
		}
		m, err := st.GetLastMsgForSubject(ctx, lg.subject)
		if err != nil {
			t.Fatalf("%s: the partition's message is gone after the purge of a snapshot that covered none of it: %v", lg.stream, err)
		}
		seqs[i] = m.Sequence
	}
	// A purge below sequences past them still takes them.
	a.node.purge(&purgeJob{p: p, linksBelow: seqs[0] + 1, doneBelow: seqs[1] + 1})
	for _, lg := range logs {
		st, _ := js.Stream(ctx, lg.stream)
		if _, err := st.GetLastMsgForSubject(ctx, lg.subject); !errors.Is(err, jetstream.ErrMsgNotFound) {
			t.Errorf("%s: the message after a purge below the sequence after it: %v, want it gone", lg.stream, err)
		}
	}
}
