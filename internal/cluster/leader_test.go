package cluster

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/frontier"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/testwait"
)

// TestReadsSeeEveryAckedWrite: the three reads a takeover makes of a
// partition's past (its log, its hosts' clocks, its snapshot record) each
// see a write acknowledged just before, on a three-server cluster whose
// streams have three replicas. A consumer placed on a follower that has
// not applied that write yet would miss it (measured before the reads
// were bounded by the leader: 1 to 2 % of log replays, 1 to 5 % of KV
// watches; in one run of this test, 3, 2 and 11 of the 200), so 200
// rounds of the three find such a read with a probability above 0.999.
func TestReadsSeeEveryAckedWrite(t *testing.T) {
	c := natstest.StartCluster(t)
	_, js := natstest.Connect(t, c.URL())
	ctx := t.Context()
	n := &Node{js: js, life: ctx}
	// Made once the cluster has placed them; written to once each has
	// a leader.
	ready := func(what string, try func() error) {
		t.Helper()
		testwait.EventuallyNil(t, 30*time.Second, what, try)
	}
	ready("stream", func() error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: DoneStream, Subjects: []string{"weft.done.>"}, Replicas: 3})
		return err
	})
	ready("hosts bucket", func() (err error) {
		n.hosts, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: HostsBucket, Replicas: 3})
		return err
	})
	ready("snapshots bucket", func() (err error) {
		n.snaps, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: SnapsBucket, Replicas: 3})
		return err
	})
	ready("first writes", func() error {
		_, err := js.Publish(ctx, donePrefix(99)+".x", nil)
		if err == nil {
			_, err = n.hosts.Put(ctx, "warm", nil)
		}
		if err == nil {
			_, err = n.snaps.Put(ctx, "warm", nil)
		}
		return err
	})

	const rounds = 200
	stale := map[string]int{}
	for i := range rounds {
		p, host := i%8, fmt.Sprintf("h%d.test", i%5)

		ack, err := js.Publish(ctx, urlSubject(donePrefix(p), fmt.Sprint("http://", host, "/", i)), []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		seen := false
		if err := n.replay(ctx, DoneStream, donePrefix(p)+".>", ack.Sequence, func(m jetstream.Msg) bool {
			seen = seen || string(m.Data()) == fmt.Sprint(i)
			return true
		}); err != nil {
			t.Logf("round %d: replay: %v", i, err) // a consumer not reachable yet: the caller tries again
		} else if !seen {
			stale["log"]++
		}

		clock, _ := json.Marshal(frontier.Clock{Errors: i})
		if _, err := n.hosts.Put(ctx, hostKey(p, host), clock); err != nil {
			t.Fatal(err)
		}
		if clocks, err := n.hostClocks(ctx, p); err != nil {
			t.Logf("round %d: host clocks: %v", i, err)
		} else if clocks[host].Errors != i {
			stale["clocks"]++
		}

		ptr, _ := json.Marshal(snapPointer{Object: fmt.Sprint(i)})
		rev, err := n.snaps.Put(ctx, snapKey(p), ptr)
		if err != nil {
			t.Fatal(err)
		}
		if got, gotRev, err := n.readPointer(ctx, p); err != nil {
			t.Fatal(err)
		} else if gotRev != rev || got.Object != fmt.Sprint(i) {
			stale["record"]++
		}
	}
	// A deleted record reads as none.
	if err := n.snaps.Delete(ctx, snapKey(3)); err != nil {
		t.Fatal(err)
	}
	if _, rev, err := n.readPointer(ctx, 3); err != nil || rev != 0 {
		t.Errorf("a deleted record read as revision %d (err %v)", rev, err)
	}
	if len(stale) > 0 {
		t.Errorf("of %d rounds, reads behind a write acknowledged before them: %v", rounds, stale)
	}
}
