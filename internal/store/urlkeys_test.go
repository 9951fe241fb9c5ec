package store

import (
	"fmt"
	"slices"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func TestURLKeysAndMetaPrefix(t *testing.T) {
	db, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := db.NewBatch()
	want := map[string]bool{}
	for i := range 50 {
		host := fmt.Sprintf("h%d.test", i%7)
		var h [16]byte
		h[0], h[15] = byte(i), byte(i*3)
		b.PutURL(uint16(i%3), host, h, URLRecord{URL: "http://" + host + "/", Status: URLQueued})
		want[fmt.Sprintf("%d %s %x", i%3, host, h)] = true
	}
	b.PutHost(1, HostRecord{Host: "h1.test"})
	b.PushQueue(1, "h1.test", 5, QueueItem{URL: "http://h1.test/", Host: "h1.test", Part: 1})
	b.PutMeta("scope/http://b.test/", []byte("1"))
	b.PutMeta("scope/http://a.test/", []byte("2"))
	b.PutMeta("scopes", []byte("not under the prefix"))
	b.PutMeta("other", nil)
	if err := b.Commit(false); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	if err := db.URLKeys(func(part uint16, host string, hash [16]byte) bool {
		got[fmt.Sprintf("%d %s %x", part, host, hash)] = true
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("URLKeys gave %d keys, want %d (host, queue or meta keys mixed in?)", len(got), len(want))
	}
	for k := range want {
		if !got[k] {
			t.Errorf("URLKeys missed %s", k)
		}
	}
	var names []string
	if err := db.MetaPrefix("scope/", func(name string, v []byte) bool {
		names = append(names, name+"="+string(v))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if w := []string{"http://a.test/=2", "http://b.test/=1"}; !slices.Equal(names, w) {
		t.Fatalf("MetaPrefix gave %v, want %v", names, w)
	}
}
