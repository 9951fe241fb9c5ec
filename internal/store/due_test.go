package store

import (
	"strings"
	"testing"
	"time"
)

// TestDueIndex: entries come back with every field, in due order within a
// partition (hosts of one instant in key order), bounded by until and
// resumable after any entry; deleted entries and cleared indexes are gone.
func TestDueIndex(t *testing.T) {
	db := openMem(t)
	mk := func(part uint16, after time.Duration, host, url string) DueEntry {
		return DueEntry{Part: part, Due: t0.Add(after), Host: host, Hash: hashOf(url),
			LastFetch: t0.Add(after - time.Hour), Visits: 3.5, Changes: 1.25, Span: 7200, Importance: 2, Unchanged: 4}
	}
	entries := []DueEntry{
		mk(1, 3*time.Minute, "b.test", "http://b.test/3"),
		mk(1, time.Minute, "a.test.evil", "http://a.test.evil/"),
		mk(1, time.Minute, "a.test", "http://a.test/1"),
		mk(1, 2*time.Minute, "a.test", "http://a.test/2"),
		mk(2, 0, "c.test", "http://c.test/"),
		mk(1, -time.Hour*24*365*60, "old.test", "http://old.test/"), // before 1970: sorts first
	}
	b := db.NewBatch()
	for _, e := range entries {
		b.PutDue(e)
	}
	commit(t, b)
	scan := func(part uint16, after *DueEntry, until time.Time) []DueEntry {
		t.Helper()
		var got []DueEntry
		if err := db.ScanDue(part, after, until, func(e DueEntry) bool { got = append(got, e); return true }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	names := func(es []DueEntry) string {
		var s []string
		for _, e := range es {
			s = append(s, e.Host)
		}
		return strings.Join(s, " ")
	}
	all := scan(1, nil, t0.Add(time.Hour))
	if got := names(all); got != "old.test a.test a.test.evil a.test b.test" {
		t.Fatalf("partition 1 in due order: %s", got)
	}
	e := all[1]
	if !e.Due.Equal(t0.Add(time.Minute)) || e.Hash != hashOf("http://a.test/1") || !e.LastFetch.Equal(t0.Add(-59*time.Minute)) ||
		e.Visits != 3.5 || e.Changes != 1.25 || e.Span != 7200 || e.Importance != 2 || e.Part != 1 {
		t.Errorf("entry read back as %+v", e)
	}
	if got := names(scan(1, nil, t0.Add(2*time.Minute))); got != "old.test a.test a.test.evil a.test" {
		t.Errorf("due by two minutes: %s (until is inclusive)", got)
	}
	if got := names(scan(1, &all[2], t0.Add(time.Hour))); got != "a.test b.test" {
		t.Errorf("after a.test.evil: %s", got)
	}
	if got := scan(1, &all[4], t0.Add(time.Hour)); len(got) != 0 {
		t.Errorf("after the last: %s", names(got))
	}
	if got := names(scan(2, nil, t0)); got != "c.test" {
		t.Errorf("partition 2: %s", got)
	}
	b = db.NewBatch()
	b.DeleteDue(1, all[1].Due, all[1].Host, all[1].Hash)
	commit(t, b)
	if got := names(scan(1, nil, t0.Add(time.Hour))); got != "old.test a.test.evil a.test b.test" {
		t.Errorf("after a delete: %s", got)
	}
	if s := fmtKey(appendDueKey(nil, &all[2])); !strings.Contains(s, `recrawl part=1 due=`) || !strings.Contains(s, `host="a.test.evil"`) {
		t.Errorf("fmtKey: %s", s)
	}
	b = db.NewBatch()
	b.PutMeta("keep", []byte("me"))
	b.ClearDue()
	commit(t, b)
	if got := names(scan(1, nil, t0.Add(time.Hour))) + names(scan(2, nil, t0.Add(time.Hour))); got != "" {
		t.Errorf("after ClearDue: %s", got)
	}
	if v, ok, err := db.GetMeta("keep"); err != nil || !ok || string(v) != "me" {
		t.Errorf("ClearDue touched another table: %q %v %v", v, ok, err)
	}
}

// TestDueEntryErrors: a malformed entry is an error naming its key.
func TestDueEntryErrors(t *testing.T) {
	good := DueEntry{Part: 3, Due: t0, Host: "a.test", Hash: hashOf("x")}
	key := appendDueKey(nil, &good)
	val := appendDueValue(nil, &good)
	if _, err := decodeDueEntry(key, val[:len(val)-3]); err == nil || !strings.Contains(err.Error(), "a.test") {
		t.Errorf("short value: %v", err)
	}
	if _, err := decodeDueEntry(key[:len(key)-1], val); err == nil {
		t.Error("short key: no error")
	}
	newer := append([]byte{dueVersion + 1}, val[1:]...)
	if _, err := decodeDueEntry(key, newer); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer version: %v", err)
	}
	b := openMem(t).NewBatch()
	b.PutDue(DueEntry{Host: "bad\x00host"})
	if err := b.Commit(false); err == nil {
		t.Error("a host with a NUL byte was written")
	}
}

// TestDueEntryVersion1 reads an entry written before version 2, without
// the count of unchanged visits, and one before version 3, without its
// Dating.
func TestDueEntryVersion1(t *testing.T) {
	e := DueEntry{Part: 3, Due: t0, Host: "a.test", Hash: hashOf("x"), LastFetch: t0.Add(-time.Hour),
		Visits: 2, Changes: 1, Span: 60, Importance: 1.5, Unchanged: 9,
		Dating: Dating{Dated: 0.98, Exposed: 42, Modified: t0.Add(-time.Minute)}}
	key := appendDueKey(nil, &e)
	val := appendDueValue(nil, &e)
	d := len(appendDating(nil, &e.Dating))
	v2 := append([]byte{2}, val[1:len(val)-d]...)
	v1 := append([]byte{1}, val[1:len(val)-d-1]...)
	want := e
	want.Dating = Dating{}
	if got, err := decodeDueEntry(key, v2); err != nil || !sameDue(got, want) {
		t.Fatalf("version 2: %+v, %v; want %+v", got, err, want)
	}
	got, err := decodeDueEntry(key, v1)
	want.Unchanged = 0
	if err != nil || !sameDue(got, want) {
		t.Fatalf("version 1: %+v, %v; want %+v", got, err, want)
	}
	if got, err := decodeDueEntry(key, val); err != nil || !sameDue(got, e) {
		t.Fatalf("version 3: %+v, %v; want %+v", got, err, e)
	}
}

// sameDue compares entries, their times by instant.
func sameDue(a, b DueEntry) bool {
	if !a.Due.Equal(b.Due) || !a.LastFetch.Equal(b.LastFetch) {
		return false
	}
	if !a.Modified.Equal(b.Modified) {
		return false
	}
	a.Due, a.LastFetch, b.Due, b.LastFetch = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	a.Modified, b.Modified = time.Time{}, time.Time{}
	return a == b
}

func TestPrior(t *testing.T) {
	db := openMem(t)
	if _, ok, err := db.GetPrior(1, "a.test"); ok || err != nil {
		t.Fatalf("a prior before any was written: %v, %v", ok, err)
	}
	want := PriorRecord{Visits: 20.5, Changes: 7.25, Span: 1234.5}
	b := db.NewBatch()
	b.PutPrior(1, "a.test", want)
	b.PutPrior(1, "a.test.evil", PriorRecord{Visits: 1})
	commit(t, b)
	if got, ok, err := db.GetPrior(1, "a.test"); !ok || err != nil || got != want {
		t.Fatalf("GetPrior = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if _, ok, _ := db.GetPrior(2, "a.test"); ok {
		t.Error("a prior read from another partition")
	}
	b = db.NewBatch()
	b.PutPrior(1, "bad\x00host", want)
	if err := b.Commit(false); err == nil {
		t.Error("a host with a NUL byte was written")
	}
	// A short value is an error naming the key.
	key := appendPriorKey(nil, 1, "a.test")
	b = db.NewBatch()
	b.set(key, []byte{priorVersion, 1, 2})
	commit(t, b)
	if _, _, err := db.GetPrior(1, "a.test"); err == nil || !strings.Contains(err.Error(), "prior part=1") {
		t.Errorf("short prior record: %v", err)
	}
}
