package jetstream

import (
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-crawler/weft/internal/natstest"
)

// TestLastMsg: the last message of a subject, wildcards included, with
// its headers; none for a subject without one; a KV delete marker told
// apart; an error naming a stream that does not exist. (That the answer
// is the leader's, never behind a write acknowledged before it, is
// cluster.TestReadsSeeEveryAckedWrite.)
func TestLastMsg(t *testing.T) {
	srv := natstest.Start(t)
	_, js := natstest.Connect(t, srv.ClientURL())
	ctx := t.Context()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := LastMsg(ctx, js, "S", "s.>"); ok || err != nil {
		t.Errorf("an empty stream: found %v, err %v", ok, err)
	}
	var want uint64
	for _, subj := range []string{"s.a.1", "s.a.2", "s.b.1"} {
		ack, err := js.PublishMsg(ctx, &nats.Msg{Subject: subj, Data: []byte(subj), Header: nats.Header{"X-Subj": {subj}}})
		if err != nil {
			t.Fatal(err)
		}
		if subj == "s.a.2" {
			want = ack.Sequence
		}
	}
	m, ok, err := LastMsg(ctx, js, "S", "s.a.>")
	if err != nil || !ok || m.Sequence != want || string(m.Data) != "s.a.2" || m.Subject != "s.a.2" || m.Header.Get("X-Subj") != "s.a.2" {
		t.Errorf("last of s.a.>: %+v, found %v, err %v; want sequence %d, s.a.2", m, ok, err, want)
	}
	if _, ok, err := LastMsg(ctx, js, "S", "s.c.>"); ok || err != nil {
		t.Errorf("a subject without messages: found %v, err %v", ok, err)
	}
	if _, _, err := LastMsg(ctx, js, "NOPE", "s.>"); err == nil {
		t.Error("a stream that does not exist: no error")
	}

	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "B"})
	if err != nil {
		t.Fatal(err)
	}
	rev, err := kv.Put(ctx, "k", []byte("v"))
	if err != nil {
		t.Fatal(err)
	}
	if m, ok, err := LastMsg(ctx, js, KVStream("B"), KVSubject("B", "k")); err != nil || !ok || m.Sequence != rev || string(m.Data) != "v" || KVDeleted(m.Header) {
		t.Errorf("a KV key: %+v, found %v, err %v; want revision %d, v", m, ok, err, rev)
	}
	if err := kv.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if m, ok, err := LastMsg(ctx, js, KVStream("B"), KVSubject("B", "k")); err != nil || !ok || !KVDeleted(m.Header) {
		t.Errorf("a deleted KV key: %+v, found %v, err %v; want its delete marker", m, ok, err)
	}
}
