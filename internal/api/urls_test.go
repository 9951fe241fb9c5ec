package api

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestCursorsAreSigned: GET /v1/urls serves only cursors this server
// process gave, for the same host and status: a position made up, a
// url_hash, a cursor of another process (a restart) or of another listing
// is refused with bad_cursor.
func TestCursorsAreSigned(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{}))
	if err != nil {
		t.Fatal(err)
	}
	list := func(s *Server, query string) (int, URLs, string) {
		t.Helper()
		code, _, body := do(t, s, "GET", "/v1/urls?"+query, "", "")
		var u URLs
		json.Unmarshal([]byte(body), &u)
		return code, u, body
	}
	code, first, body := list(s, "limit=3")
	if code != 200 || first.NextCursor == "" {
		t.Fatalf("first page: %d %s", code, body)
	}
	if code, next, body := list(s, "limit=3&cursor="+first.NextCursor); code != 200 || len(next.URLs) != 3 || next.URLs[0].URL != "http://a.test/3" {
		t.Fatalf("the cursor given: %d %s", code, body)
	}
	// Well-formed positions, as the cursor's encoding would have them
	// without a signature: partition 1, hash 2, host a.test.
	pos := binary.BigEndian.AppendUint16(nil, 1)
	pos = append(pos, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	pos = append(pos, "a.test"...)
	forged := base64.RawURLEncoding.EncodeToString(pos)
	tampered, _ := base64.RawURLEncoding.DecodeString(first.NextCursor)
	tampered[3] ^= 1
	other, err := New(Config{Addr: "127.0.0.1:0"}, resourcesOf(&fakeCrawl{})) // the same crawl, served again after a restart
	if err != nil {
		t.Fatal(err)
	}
	_, fromOther, _ := list(other, "limit=3")
	for name, q := range map[string]string{
		"a position made up":        "cursor=" + forged,
		"padded with 16 bytes":      "cursor=" + base64.RawURLEncoding.EncodeToString(append(pos, make([]byte, 16)...)),
		"a cursor changed":          "cursor=" + base64.RawURLEncoding.EncodeToString(tampered),
		"a url_hash":                "cursor=" + first.URLs[2].URLHash,
		"another process's":         "limit=3&cursor=" + fromOther.NextCursor,
		"for another status filter": "limit=3&status=done&cursor=" + first.NextCursor,
		"for another host filter":   "limit=3&host=a.test&cursor=" + first.NextCursor,
	} {
		code, _, body := list(s, q)
		if code != 400 || errorCode(t, body) != "bad_cursor" {
			t.Errorf("%s: %d %s, want 400 bad_cursor", name, code, body)
		}
		if name == "another process's" && !strings.Contains(body, "restart") {
			t.Errorf("a cursor from before a restart: the message does not say why: %s", body)
		}
	}
	if _, page, _ := list(other, "limit=3&cursor="+url.QueryEscape(fromOther.NextCursor)); len(page.URLs) != 3 {
		t.Errorf("the other process refuses its own cursor: %+v", page)
	}
}
