package render

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// The auto rule's decisions: a host's policy overrides the mode; a host
// whose renders find nothing new is given up after GiveUpAfter of them,
// and one whose render found something never is.
func TestTierWants(t *testing.T) {
	shell := []byte(`<div id=app></div><script src=/app.js></script>`)
	static := []byte(`<p>no script</p>`)
	r := &Tier{mode: Auto, giveUp: 2, hosts: map[string]hostRenders{}, log: slog.New(slog.DiscardHandler)}
	if !r.Wants("a", shell, "") || r.Wants("a", static, "") || !r.Wants("a", static, Always) || r.Wants("a", shell, Never) {
		t.Fatal("the rule or the policy is not followed")
	}
	r.Learn("a", 0)
	r.Learn("a", 0)
	if r.Wants("a", shell, "") || !r.Wants("a", shell, Always) {
		t.Fatal("host a not given up after two barren renders, or its policy not kept")
	}
	r.Learn("b", 1)
	for range 5 {
		r.Learn("b", 0)
	}
	if !r.Wants("b", shell, "") || r.stopped.Load() != 1 {
		t.Fatalf("host b, whose render found a link, given up (stopped %d)", r.stopped.Load())
	}
	// A page with static navigation and the scripts of a theme is taken
	// as complete, and not rendered, but on a host whose renders have
	// found links their HTML did not have.
	var nav strings.Builder
	for i := range NavFloor {
		fmt.Fprintf(&nav, `<li><a href="/doc/%d.html">Chapter %d</a></li>`, i, i)
	}
	docs := []byte(`<script src="/_static/jquery.js"></script><noscript>Search needs JavaScript.</noscript><ul>` + nav.String() + `</ul>`)
	if r.Wants("c", docs, "") || !r.Wants("b", docs, "") || !r.Wants("c", docs, Always) {
		t.Fatal("a page with static navigation rendered on a host that has shown no script-made link, or not rendered where one has")
	}
}

// A nil tier of a crawl that asked for rendering says why it is off; one
// of a crawl that did not says nothing.
func TestTierSummaryWhenOff(t *testing.T) {
	var r *Tier
	if s := r.Summary(Never, ""); s != nil {
		t.Errorf("never: %+v, want no render summary", s)
	}
	if s := r.Summary(Auto, "render: no Chromium found"); s == nil || s.Mode != Never || s.Off != "render: no Chromium found" {
		t.Errorf("auto without Chromium: %+v", s)
	}
	if err := (TierConfig{Mode: "sometimes"}).Validate(); err == nil || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Errorf("a bad mode: %v", err)
	}
}
