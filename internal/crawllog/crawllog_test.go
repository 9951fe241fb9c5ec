package crawllog

import (
	"bufio"
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Every line of real Heritrix logs in testdata (Heritrix 1 and 3, with
// and without the thirteenth field) passes the parser, and the fields
// read are the ones written.
func TestParseAcceptsHeritrixLines(t *testing.T) {
	f, err := os.Open("testdata/heritrix-crawl-log.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if s := sc.Text(); s != "" && s[0] != '#' {
			n++
			if _, err := Parse(s); err != nil {
				t.Errorf("%s\n%v", s, err)
			}
		}
	}
	if n < 20 {
		t.Fatalf("%d lines read from testdata", n)
	}
	l, err := Parse(`2017-11-14T13:58:08.640Z -9998          - https://www.facebook.com/sharer.php?u=x LELL http://www.hu17.net/2017/05/14/b/ unknown #021 - - http://www.HU17.net 2t {}`)
	want := Line{Logged: time.Date(2017, 11, 14, 13, 58, 8, 640e6, time.UTC), Status: RobotsPrecluded, Size: -1, URI: "https://www.facebook.com/sharer.php?u=x",
		Path: "LELL", Via: "http://www.hu17.net/2017/05/14/b/", Worker: 21, Source: "http://www.HU17.net", Annotations: []string{"2t"}, Extra: "{}"}
	if err != nil || !reflect.DeepEqual(l, want) {
		t.Errorf("got  %+v, %v\nwant %+v", l, err, want)
	}
	l, err = Parse(`2009-06-01T15:36:22.379Z   200       8321 http://www.aros.dk/AC.js E http://www.aros.dk/ application/x-javascript #029 20090601153622257+67 sha1:OUZ5LFEXKVOTUNOH6DQSKMCPAAGQAOO3 - duplicate:"1039-130.arc,9358",content-size:8606`)
	if err != nil || l.Start != time.Date(2009, 6, 1, 15, 36, 22, 257e6, time.UTC) || l.Duration != 67*time.Millisecond ||
		!reflect.DeepEqual(l.Annotations, []string{`duplicate:"1039-130.arc,9358"`, "content-size:8606"}) || l.MediaType != "application/x-javascript" {
		t.Errorf("got %+v, %v", l, err)
	}
}

// A line that breaks the documented grammar of any field is refused,
// and the error names the field.
func TestParseRefusesWhatTheDocsDoNotAllow(t *testing.T) {
	good := strings.Fields(`2011-06-23T17:12:09.591Z 200 15829 http://www.identitytheory.com/etexts/poetics.html L http://www.identitytheory.com/ text/html #025 20110623171208546+922 sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW - -`)
	for _, tc := range []struct {
		field int
		value string
	}{
		{1, "2011-06-23T17:12:09Z"}, {1, "2011-06-23_17:12:09.591"}, {1, "2011-06-23T17:12:09.591+02:00"},
		{2, "42"}, {2, "-9"}, {2, "abc"}, {2, "1000"},
		{3, "-2"}, {3, "12k"},
		{4, "/relative/path"}, {4, "-"},
		{5, "LQ"}, {5, "l"}, {5, strings.Repeat("L", 51)}, {5, "3+LL"}, {5, "x+" + strings.Repeat("L", 50)},
		{6, "www.example.com/"},
		{7, "html"}, {7, "text/"}, {7, "text/html;charset=utf-8"},
		{8, "25"}, {8, "#25"}, {8, "#0a1"},
		{9, "20110623171208546"}, {9, "2011062317120854+922"}, {9, "20110623171208546+"}, {9, "20111323171208546+1"},
		{10, "sha1:7ajumsdtomt4fn7mbfggnju3z56mlcmw"}, {10, "md5:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW"}, {10, "sha1:7AJU"},
		{12, "a,,b"}, {12, `duplicate:"x,1`},
	} {
		f := append([]string(nil), good...)
		f[tc.field-1] = tc.value
		_, err := Parse(strings.Join(f, " "))
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), "field "+strconv.Itoa(tc.field)+" ") {
			t.Errorf("field %d = %q: err %v", tc.field, tc.value, err)
		}
	}
	if _, err := Parse(strings.Join(good[:11], " ")); !errors.Is(err, ErrSyntax) {
		t.Errorf("11 fields: err %v", err)
	}
	if _, err := Parse(strings.Join(good, " ") + " warc.gz"); !errors.Is(err, ErrSyntax) {
		t.Errorf("a thirteenth field that is not JSON: err %v", err)
	}
	if _, err := Parse(strings.Join(good, " ")); err != nil {
		t.Errorf("the line unchanged: %v", err)
	}
}

// Append writes a line exactly as Heritrix does: the documentation's
// example comes out byte for byte from its fields.
func TestAppendWritesAsHeritrix(t *testing.T) {
	l := Line{Logged: time.Date(2011, 6, 23, 17, 12, 9, 591e6, time.UTC), Status: 200, Size: 15829,
		URI: "http://www.identitytheory.com/etexts/poetics.html", Path: "L", Via: "http://www.identitytheory.com/",
		MediaType: "text/html; charset=iso-8859-1", Worker: 25, Start: time.Date(2011, 6, 23, 17, 12, 8, 546e6, time.UTC),
		Duration: 922 * time.Millisecond, Digest: "sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW"}
	want := "2011-06-23T17:12:09.591Z   200      15829 http://www.identitytheory.com/etexts/poetics.html L http://www.identitytheory.com/ text/html #025 20110623171208546+922 sha1:7AJUMSDTOMT4FN7MBFGGNJU3Z56MLCMW - -\n"
	if got := string(Append(nil, &l)); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	// A failure: no size, no type, no fetch time, no digest; a seed.
	l = Line{Logged: l.Logged, Status: ConnectFailed, Size: -1, URI: "http://a.test/", Worker: 1234, Annotations: []string{"lenTrunc", "x y"}}
	want = "2011-06-23T17:12:09.591Z    -2          - http://a.test/ - - unknown #1234 - - - lenTrunc,x_y\n"
	if got := string(Append(nil, &l)); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
	if _, err := Parse(strings.TrimSuffix(want, "\n")); err != nil {
		t.Error(err)
	}
}

// A path keeps its last 50 hops and counts the others, as the
// documentation's 62-hop example shows.
func TestExtendKeepsTheLast50Hops(t *testing.T) {
	want := "12+LLRLLLRELLLLRLLLRELLLLRLLLRELLLLRLLLRELLLLRLLLRELE"
	hops := "LLLLLLLLLLLL" + want[3:]
	path := ""
	for i := range len(hops) {
		path = Extend(path, Hop(hops[i]))
		if !validPath(path) {
			t.Fatalf("after %d hops: %q does not parse", i+1, path)
		}
		if i == 49 && path != hops[:50] {
			t.Fatalf("after 50 hops: %q", path)
		}
	}
	if path != want {
		t.Errorf("got  %s\nwant %s", path, want)
	}
	if got := Extend("", Link); got != "L" {
		t.Errorf("a seed's link: %q", got)
	}
}

// Whatever Parse accepts, Append writes back as a line Parse accepts
// with the same fields.
func FuzzParse(f *testing.F) {
	f.Add(`2011-06-23T17:12:08.802Z   200       1299 http://content-5.powells.com/robots.txt LREP http://content-5.powells.com/cgi-bin/i text/plain #014 20110623171208574+225 sha1:YIUOKDGOLGI5JYHDTXRFFQ5FF4N2EJRV - -`)
	f.Add(`2017-11-14T13:58:08.640Z -9998          - https://www.facebook.com/s LELL http://www.hu17.net/ unknown #021 - - http://www.HU17.net 2t {}`)
	f.Fuzz(func(t *testing.T, s string) {
		l, err := Parse(s)
		if err != nil {
			return
		}
		back := strings.TrimSuffix(string(Append(nil, &l)), "\n")
		l2, err := Parse(back)
		if err != nil {
			t.Fatalf("%q written as %q: %v", s, back, err)
		}
		if !reflect.DeepEqual(l, l2) {
			t.Fatalf("%q written as %q reads\n%+v, not\n%+v", s, back, l2, l)
		}
	})
}
