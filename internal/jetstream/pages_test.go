package jetstream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"

	"github.com/weft-crawler/weft/internal/crawl"
	"github.com/weft-crawler/weft/internal/events"
	"github.com/weft-crawler/weft/internal/natstest"
	"github.com/weft-crawler/weft/internal/partition"
	"github.com/weft-crawler/weft/internal/plugin"
	"github.com/weft-crawler/weft/internal/synthweb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startNATS(t *testing.T) *server.Server { return natstest.Start(t) }

// TestPageEvents crawls a small web with two sinks, the events file and
// the JetStream stream: the stream holds one message per capture, each on
// its host's partition subject, in the documented schema; a capture
// delivered again (the crawl delivers at least once) is stored once.
func TestPageEvents(t *testing.T) {
	ns := startNATS(t)
	web, err := synthweb.Start(synthweb.Config{Seed: 5, Hosts: 3, PagesPerHost: 12, MinPageBytes: 12 << 10, MaxPageBytes: 16 << 10, MinLinks: 20, MaxLinks: 30,
		RobotsKinds: []synthweb.RobotsKind{synthweb.RobotsNotFound}})
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	ctx := t.Context()
	const parts = 8
	pages, err := OpenPages(ctx, PagesConfig{URL: ns.ClientURL(), Partitions: parts})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, err := events.OpenFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := crawl.Config{Seeds: web.Seeds(), DataDir: filepath.Join(dir, "data"), Workers: 4, Delay: 2 * time.Millisecond,
		UserAgent: "weft/test (+https://example.org/weft-crawler)", NoSitemaps: true, Partitions: parts,
		NoRequisites: true, Render: crawl.RenderConfig{Mode: crawl.RenderNever}}
	cfg.Fetch.Resolve = web.Resolve()
	cfg.Fetch.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	cfg.Sinks = []events.Sink{file, pages}
	cfg.Extensions = []plugin.Handler{pathField{}} // its fields ride in the events
	c, err := crawl.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	file.Close()

	// What the events file says was captured.
	want := map[string]events.Event{}
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e events.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		want[e.WARCFile+"@"+itoa(e.Offset)] = e
	}
	f.Close()
	if len(want) < 20 {
		t.Fatalf("%d captures: too few to judge", len(want))
	}
	withFields := 0
	for _, e := range want {
		if e.Fields["url"] == e.URL {
			withFields++
		}
	}
	if withFields < 10 {
		t.Errorf("%d events carry the extension's fields, want every HTML page's", withFields)
	}

	// Read the stream as an indexer would.
	_, js := natstest.Connect(t, ns.ClientURL())
	cons, err := js.OrderedConsumer(ctx, DefaultPagesStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for got < len(want) {
		batch, err := cons.Fetch(100, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			var ev PageEvent
			if err := json.Unmarshal(m.Data(), &ev); err != nil {
				t.Fatalf("%s: %v", m.Data(), err)
			}
			e, ok := want[ev.WARCFile+"@"+itoa(ev.Offset)]
			if !ok || e.URL != ev.URL || e.Status != ev.Status || e.PayloadDigest != ev.ContentHash || e.Length != ev.Length || !e.FetchedAt.Equal(ev.FetchedAt) || ev.SchemaVersion != 1 ||
				fmt.Sprint(e.Fields) != fmt.Sprint(ev.Fields) {
				t.Errorf("message %+v does not match a capture (%+v)", ev, e)
			}
			if wantSubj := DefaultPagesSubject + "." + itoa(int64(partition.Of(hostOf(ev.URL), parts))); m.Subject() != wantSubj {
				t.Errorf("%s on %s, want %s", ev.URL, m.Subject(), wantSubj)
			}
			got++
		}
		if n == 0 {
			break
		}
	}
	if got != len(want) {
		t.Errorf("%d messages for %d captures", got, len(want))
	}

	// At least once: the same capture again is stored once.
	var any events.Event
	for _, e := range want {
		any = e
		break
	}
	if err := pages.Capture(any); err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, DefaultPagesStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != uint64(len(want)) {
		t.Errorf("after a repeated capture the stream holds %d messages, want %d", info.State.Msgs, len(want))
	}
	pages.Close()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestPagesKeepsAnExistingStream: a stream the operator made keeps its
// limits; one that does not take the subject is refused with a reason.
func TestPagesKeepsAnExistingStream(t *testing.T) {
	t.Parallel()
	ns := startNATS(t)
	_, js := natstest.Connect(t, ns.ClientURL())
	ctx := t.Context()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OPS", Subjects: []string{"ops.pages.>"}, MaxAge: time.Hour, Duplicates: time.Minute}); err != nil {
		t.Fatal(err)
	}
	p, err := OpenPages(ctx, PagesConfig{URL: ns.ClientURL(), Stream: "OPS", Subject: "ops.pages"})
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	st, _ := js.Stream(ctx, "OPS")
	if info, _ := st.Info(ctx); info.Config.MaxAge != time.Hour || info.Config.Duplicates != time.Minute {
		t.Errorf("the operator's stream was changed: %+v", info.Config)
	}
	if _, err := OpenPages(ctx, PagesConfig{URL: ns.ClientURL(), Stream: "OPS", Subject: "other"}); err == nil {
		t.Error("a stream that does not take the subject was accepted")
	}
}

// pathField is an extension that gives every HTML page a field.
type pathField struct{}

func (pathField) Name() string           { return "path" }
func (pathField) Accepts(mt string) bool { return mt == "text/html" }
func (pathField) Handle(d *plugin.Response) (plugin.Result, error) {
	return plugin.Result{Fields: map[string]any{"url": d.URL}}, nil
}
