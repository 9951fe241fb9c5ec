package extract

import "testing"

func TestVisibleText(t *testing.T) {
	for _, tc := range []struct{ page, want string }{
		{`<html><head><title>A  shop</title><style>p{x:1}</style><script>var a="<p>no</p>";</script></head><body><h1 class=t>Red
		kettle</h1><p>Price: <span>12.50</span></p><noscript>enable js</noscript><template><b>x</b></template>end</body></html>`,
			"A shop Red kettle Price: 12.50 end"},
		{"plain &amp; simple", "plain & simple"},
		{"", ""},
	} {
		if got := VisibleText([]byte(tc.page), 1<<20); got != tc.want {
			t.Errorf("VisibleText(%.30q) = %q, want %q", tc.page, got, tc.want)
		}
	}
	if got := VisibleText([]byte("<p>one two three</p>"), 7); got != "one two" {
		t.Errorf("cut at 7 bytes: %q", got)
	}
}
