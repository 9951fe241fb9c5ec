package content

import (
	"net/http"
	"testing"
	"unicode/utf8"
)

// FuzzHTMLRead feeds hostile bodies under hostile Content-Types to the HTML
// handler, charset detection and conversion included: it never panics,
// never converts a body to more than twice its size, and returns links
// that are valid UTF-8 whatever the body's encoding.
func FuzzHTMLRead(f *testing.F) {
	for _, tc := range []struct{ ctype, body string }{
		{"text/html; charset=utf-8", `<a href="/caf\xc3\xa9">x</a>`},
		{"text/html; charset=windows-1252", "<a href=\"/caf\xe9\">x</a>"},
		{"text/html; charset=x-bogus", `<meta charset="shift_jis"><a href="/x">` + "\x93\xfa" + `</a>`},
		{"text/html", "\xff\xfe<\x00a\x00 \x00h\x00r\x00e\x00f\x00=\x00/\x00x\x00>\x00"},
		{"text/html", "\x00\x01\x02\x03binary"},
		{"text/html; charset=", "<meta http-equiv=content-type content='text/html; charset=utf-16be'><a href=/y>"},
		{"text/html;;charset=\"utf-8", "<p>\x80\x81\x82</p>"},
	} {
		f.Add(tc.ctype, []byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, ctype string, body []byte) {
		res := HTML{}.Read(Doc{MediaType: "text/html", Header: http.Header{"Content-Type": {ctype}}, Body: body, Words: true, Embeds: true})
		for _, l := range res.Links {
			if !utf8.ValidString(l.URL) && res.Charset != CharsetInvalid && res.Charset != CharsetUnknown && res.Charset != "" {
				t.Fatalf("link %q of a body converted to UTF-8 (%s) is not UTF-8", l.URL, res.Charset)
			}
		}
		out, _ := toUTF8(body, ctype)
		if len(out) > 2*len(body)+8 && len(out) != len(body) {
			t.Fatalf("%d bytes converted to %d", len(body), len(out))
		}
	})
}
