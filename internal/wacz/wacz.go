// Package wacz packages WARC files as a WACZ 1.1.1 file (Webrecorder's
// Web Archive Collection Zipped): a ZIP that holds the WARC files under
// archive/, their CDXJ index under indexes/, the pages under pages/, and
// datapackage.json, which lists every file with its size and SHA-256,
// and datapackage-digest.json, the digest of that list. A replay engine
// (ReplayWeb.page, wabac.js) opens it whole, or reads its parts by byte
// range: so the WARC files are stored, not compressed again (their
// records are gzip members already), and each can be read at an offset.
package wacz

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Version is the WACZ version written.
const Version = "1.1.1"

// Package is what a WACZ file holds.
type Package struct {
	// WARCs are the paths of the WARC files, stored as archive/<base name>.
	// The index's filenames name them by base name.
	WARCs []string
	// Index writes the CDXJ index, sorted, one line per capture
	// ("<surt> <timestamp> {json}"), to w: indexes/index.cdxj.
	Index func(w io.Writer) error
	// Pages are the pages a replay lists: pages/pages.jsonl.
	Pages []Page
	// Requires are the file names of the WACZ files of earlier crawls
	// whose captures revisit records here refer to: datapackage.json
	// lists them under relation.requires, where wabac.js looks for a
	// revisit's original that the package itself does not hold.
	Requires []string
	// Title and Description describe the collection; Software names the
	// program that wrote it; Created is when (zero means now).
	Title, Description, Software string
	Created                      time.Time
}

// Page is one line of pages.jsonl.
type Page struct {
	URL   string    `json:"url"`
	TS    time.Time `json:"ts"`
	Title string    `json:"title,omitempty"`
}

// resource is an entry of datapackage.json.
type resource struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Hash  string `json:"hash"`
	Bytes int64  `json:"bytes"`
}

type dataPackage struct {
	Profile     string     `json:"profile"`
	WACZVersion string     `json:"wacz_version"`
	Title       string     `json:"title,omitempty"`
	Description string     `json:"description,omitempty"`
	Created     string     `json:"created"`
	Software    string     `json:"software,omitempty"`
	MainPageURL string     `json:"mainPageUrl,omitempty"`
	MainPageTS  string     `json:"mainPageDate,omitempty"`
	Resources   []resource `json:"resources"`
	Relation    *relation  `json:"relation,omitempty"`
}

// relation is what a package needs of others.
type relation struct {
	Requires []required `json:"requires"`
}

type required struct {
	Filename string `json:"filename"`
}

// Write writes p as a WACZ file to w.
func Write(w io.Writer, p Package) error {
	created := p.Created
	if created.IsZero() {
		created = time.Now()
	}
	created = created.UTC()
	zw := zip.NewWriter(w)
	var res []resource
	// add stores one file, hashing it as it goes.
	add := func(name string, write func(io.Writer) error) error {
		fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: created})
		if err != nil {
			return err
		}
		h := sha256.New()
		cw := &counter{w: io.MultiWriter(fw, h)}
		if err := write(cw); err != nil {
			return fmt.Errorf("wacz: %s: %w", name, err)
		}
		res = append(res, resource{Name: path.Base(name), Path: name, Hash: sum(h), Bytes: cw.n})
		return nil
	}
	seen := map[string]string{}
	for _, f := range p.WARCs {
		base := filepath.Base(f)
		if other, ok := seen[base]; ok {
			return fmt.Errorf("wacz: %s and %s have the same name", other, f)
		}
		seen[base] = f
		if err := add("archive/"+base, func(w io.Writer) error {
			src, err := os.Open(f)
			if err != nil {
				return err
			}
			defer src.Close()
			_, err = io.Copy(w, src)
			return err
		}); err != nil {
			return err
		}
	}
	if err := add("indexes/index.cdxj", p.Index); err != nil {
		return err
	}
	if err := add("pages/pages.jsonl", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		if err := enc.Encode(map[string]string{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}); err != nil {
			return err
		}
		for _, pg := range p.Pages {
			pg.TS = pg.TS.UTC()
			if err := enc.Encode(pg); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	dp := dataPackage{
		Profile: "data-package", WACZVersion: Version, Title: p.Title, Description: p.Description,
		Created: created.Format(time.RFC3339), Software: p.Software, Resources: res,
	}
	for _, r := range p.Requires {
		if dp.Relation == nil {
			dp.Relation = &relation{}
		}
		dp.Relation.Requires = append(dp.Relation.Requires, required{Filename: r})
	}
	if len(p.Pages) > 0 {
		dp.MainPageURL, dp.MainPageTS = p.Pages[0].URL, p.Pages[0].TS.UTC().Format(time.RFC3339)
	}
	js, err := json.MarshalIndent(dp, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	fw, err := zw.CreateHeader(&zip.FileHeader{Name: "datapackage.json", Method: zip.Store, Modified: created})
	if err != nil {
		return err
	}
	if _, err := fw.Write(js); err != nil {
		return err
	}
	h := sha256.Sum256(js)
	digest, err := json.MarshalIndent(map[string]string{"path": "datapackage.json", "hash": "sha256:" + hex.EncodeToString(h[:])}, "", "  ")
	if err != nil {
		return err
	}
	fw, err = zw.CreateHeader(&zip.FileHeader{Name: "datapackage-digest.json", Method: zip.Store, Modified: created})
	if err != nil {
		return err
	}
	if _, err := fw.Write(append(digest, '\n')); err != nil {
		return err
	}
	return zw.Close()
}

func sum(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Check reads a WACZ file back and checks what Write promises: every
// resource datapackage.json lists is there, stored, with its size and
// SHA-256, and datapackage-digest.json is datapackage.json's digest. It
// returns the resources' paths.
func Check(r io.ReaderAt, size int64) ([]string, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("wacz: %w", err)
	}
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	read := func(name string) ([]byte, error) {
		f, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("wacz: no %s", name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("wacz: %s: %w", name, err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			return nil, fmt.Errorf("wacz: %s: %w", name, err)
		}
		return b, nil
	}
	dpBytes, err := read("datapackage.json")
	if err != nil {
		return nil, err
	}
	dgBytes, err := read("datapackage-digest.json")
	if err != nil {
		return nil, err
	}
	var dg struct{ Path, Hash string }
	if err := json.Unmarshal(dgBytes, &dg); err != nil {
		return nil, fmt.Errorf("wacz: datapackage-digest.json: %w", err)
	}
	if h := sha256.Sum256(dpBytes); dg.Path != "datapackage.json" || dg.Hash != "sha256:"+hex.EncodeToString(h[:]) {
		return nil, fmt.Errorf("wacz: datapackage-digest.json says %s %s, datapackage.json is sha256:%x", dg.Path, dg.Hash, h)
	}
	var dp dataPackage
	if err := json.Unmarshal(dpBytes, &dp); err != nil {
		return nil, fmt.Errorf("wacz: datapackage.json: %w", err)
	}
	if dp.WACZVersion != Version || dp.Profile != "data-package" {
		return nil, fmt.Errorf("wacz: datapackage.json: version %q, profile %q", dp.WACZVersion, dp.Profile)
	}
	var paths []string
	for _, res := range dp.Resources {
		f, ok := files[res.Path]
		if !ok {
			return nil, fmt.Errorf("wacz: %s is listed, not in the package", res.Path)
		}
		if strings.HasPrefix(res.Path, "archive/") && f.Method != zip.Store {
			return nil, fmt.Errorf("wacz: %s is compressed: it could not be read by range", res.Path)
		}
		b, err := read(res.Path)
		if err != nil {
			return nil, err
		}
		if h := sha256.Sum256(b); int64(len(b)) != res.Bytes || res.Hash != "sha256:"+hex.EncodeToString(h[:]) {
			return nil, fmt.Errorf("wacz: %s: %d bytes, sha256:%x; datapackage.json says %d, %s", res.Path, len(b), h, res.Bytes, res.Hash)
		}
		paths = append(paths, res.Path)
	}
	return paths, nil
}
