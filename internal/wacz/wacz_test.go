package wacz

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Check finds any byte of a package changed, and a file left out.
func TestCheckFindsDamage(t *testing.T) {
	dir := t.TempDir()
	w1 := filepath.Join(dir, "a.warc.gz")
	if err := os.WriteFile(w1, bytes.Repeat([]byte("warc bytes "), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	p := Package{WARCs: []string{w1}, Title: "t", Created: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		Index: func(w io.Writer) error {
			_, err := io.WriteString(w, "com,example)/ 20261202000000 {\"url\":\"http://example.com/\",\"filename\":\"a.warc.gz\",\"offset\":\"0\",\"length\":\"10\"}\n")
			return err
		},
		Pages: []Page{{URL: "http://example.com/", TS: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}}}
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	paths, err := Check(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(paths, " ") != "archive/a.warc.gz indexes/index.cdxj pages/pages.jsonl" {
		t.Errorf("resources %v", paths)
	}
	// One byte of the WARC file changed inside the package.
	bad := bytes.Clone(good)
	i := bytes.Index(bad, []byte("warc bytes"))
	bad[i] = 'W'
	if _, err := Check(bytes.NewReader(bad), int64(len(bad))); err == nil || !strings.Contains(err.Error(), "archive/a.warc.gz") {
		t.Errorf("a changed WARC byte: %v", err)
	}
	// Two files of one name.
	if err := Write(io.Discard, Package{WARCs: []string{w1, w1}, Index: p.Index}); err == nil {
		t.Error("two WARC files of one name were packaged")
	}
	// A missing WARC file names itself.
	if err := Write(io.Discard, Package{WARCs: []string{filepath.Join(dir, "gone.warc.gz")}, Index: p.Index}); err == nil || !strings.Contains(err.Error(), "gone.warc.gz") {
		t.Errorf("a missing WARC file: %v", err)
	}
}

// A package whose revisits refer to captures in earlier packages names
// them under relation.requires, where wabac.js looks for a revisit's
// original that the package does not hold.
func TestRequires(t *testing.T) {
	var buf bytes.Buffer
	index := func(w io.Writer) error { return nil }
	if err := Write(&buf, Package{Index: index, Requires: []string{"first.wacz", "other.wacz"}}); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open("datapackage.json")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var dp struct {
		Relation struct {
			Requires []struct{ Filename string }
		}
	}
	if err := json.NewDecoder(rc).Decode(&dp); err != nil {
		t.Fatal(err)
	}
	if r := dp.Relation.Requires; len(r) != 2 || r[0].Filename != "first.wacz" || r[1].Filename != "other.wacz" {
		t.Errorf("relation.requires = %+v, want first.wacz and other.wacz", r)
	}
	buf.Reset()
	if err := Write(&buf, Package{Index: index}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte(`"relation"`)) {
		t.Error("a package that requires none has a relation")
	}
}
