package plugin

import "testing"

func TestMatchType(t *testing.T) {
	for _, c := range []struct {
		patterns []string
		mt       string
		want     bool
	}{
		{[]string{"text/html"}, "text/html", true},
		{[]string{" Text/HTML "}, "text/html", true},
		{[]string{"text/*"}, "text/plain", true},
		{[]string{"text/*"}, "textual/plain", false},
		{[]string{"*/*"}, "image/png", true},
		{[]string{"image/png", "text/html"}, "application/pdf", false},
		{nil, "text/html", false},
	} {
		if got := MatchType(c.patterns, c.mt); got != c.want {
			t.Errorf("MatchType(%q, %q) = %v, want %v", c.patterns, c.mt, got, c.want)
		}
	}
}

func TestNameOf(t *testing.T) {
	named := HandlerFunc("prices", func(*Response) (Result, error) { return Result{}, nil }, "text/html")
	unnamed := HandlerFunc("", func(*Response) (Result, error) { return Result{}, nil }, "text/html")
	if n := NameOf(named, 4); n != "prices" {
		t.Errorf("a named handler is counted as %q", n)
	}
	if n := NameOf(unnamed, 2); n != "handler3" {
		t.Errorf("the third handler, unnamed, is counted as %q, want handler3", n)
	}
}

func TestPageText(t *testing.T) {
	p := &Page{MediaType: "text/html", Body: []byte("<html><head><title>T</title><script>x()</script></head><body><p>Hello\n  <b>world</b></p></body></html>")}
	if got := p.Text(); got != "T Hello world" && got != "Hello world" {
		t.Errorf("HTML text %q", got)
	}
	p = &Page{MediaType: "text/plain", Body: []byte("plain words")}
	if got := p.Text(); got != "plain words" {
		t.Errorf("plain text %q", got)
	}
	if got := (&Page{MediaType: "image/png", Body: []byte{1, 2}}).Text(); got != "" {
		t.Errorf("an image's text %q", got)
	}
}
