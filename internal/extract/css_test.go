package extract

import (
	"slices"
	"testing"
)

func TestCSS(t *testing.T) {
	sheet := `@import "base.css";
@import url('print.css') print;
@IMPORT 'x\'y.css';
/* url(commented.png) */
body { background: url(  bg.png  ) no-repeat; content: "url(in-a-string.png)"; }
@font-face { font-family: F; src: url("fonts/f.woff2") format("woff2"), url(fonts/f.woff) format("woff"); }
.a { background-image: image-set(url(a-1x.png) 1x, url(a-2x.png) 2x); }
.b { mask: url(data:image/svg+xml;base64,AAAA); }
.c { background: url(sp\ ace.png); }
.d { content: "not an import"; }`
	want := []string{"base.css", "print.css", "x'y.css", "bg.png", "fonts/f.woff2", "fonts/f.woff", "a-1x.png", "a-2x.png",
		"sp ace.png"} // data: names nothing to fetch
	if got := CSS([]byte(sheet), 0); !slices.Equal(got, want) {
		t.Errorf("CSS:\n got %q\nwant %q", got, want)
	}
	if got := CSS([]byte(sheet), 3); len(got) != 3 {
		t.Errorf("max 3: %q", got)
	}
	// A style attribute's declarations.
	if got := CSS([]byte(`background:url("/img/hero.jpg")`), 0); !slices.Equal(got, []string{"/img/hero.jpg"}) {
		t.Errorf("declarations: %q", got)
	}
}

func FuzzCSS(f *testing.F) {
	f.Add([]byte(`@import "a.css"; b{c:url(d.png)}`))
	f.Add([]byte(`url(`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, u := range CSS(b, 50) {
			if len(u) > len(b) {
				t.Fatalf("URL %q longer than its sheet", u)
			}
		}
	})
}
