package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-crawler/weft/internal/archive"
	"github.com/weft-crawler/weft/internal/canon"
	"github.com/weft-crawler/weft/internal/version"
	"github.com/weft-crawler/weft/internal/wacz"
)

func newCDXCmd() *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "cdx",
		Short: "Print the capture index of a crawl as CDXJ",
		Long: `Print the capture index of the crawl in --data as CDXJ, one line per
archived response in SURT then time order:

  <surt> <yyyymmddhhmmss> {"url", "mime", "status", "digest", "length", "offset", "filename"}

as pywb and other wayback tools read it. A revisit record (a payload already
archived under another capture) has the MIME type "warc/revisit". Run it
while no crawl runs on the directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := archive.Open(dataDir, canon.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			n, err := a.WriteCDXJ(cmd.OutOrStdout())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d captures\n", n)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "data", "the crawl's data directory")
	return cmd
}

func newGetCmd() *cobra.Command {
	var (
		dataDir, at string
		s3          s3Flags
	)
	cmd := &cobra.Command{
		Use:   "get URL",
		Short: "Print an archived response: its headers and body, from the WARC files",
		Long: `Print the archived response of URL (its HTTP header block, then its body,
as received) by reading its WARC record at the offset the capture index
gives. With --at, the capture closest to that time (RFC 3339, or a 14-digit
CDX timestamp); else the latest. A revisit record prints its own headers
with the body of the capture it refers to. A line on stderr says which
capture was read. A WARC file the crawl uploaded to an object store (--s3-*)
is read from there, one record by byte range.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var when time.Time
			if at != "" {
				var err error
				if when, err = parseAt(at); err != nil {
					return usagef("--at %q: want RFC 3339 (2026-11-30T10:00:00Z) or yyyymmddhhmmss", at)
				}
			}
			objs, err := s3.store()
			if err != nil {
				return err
			}
			a, err := archive.Open(dataDir, canon.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			if objs != nil {
				a.UseObjects(objs)
			}
			l, err := a.Get(args[0], when)
			if err != nil {
				return err
			}
			c := l.Capture
			desc := fmt.Sprintf("%s captured %s, status %d, %s at %d", c.URL, c.Date.UTC().Format(time.RFC3339), c.Status, c.File, c.Offset)
			if l.Original != nil {
				desc += fmt.Sprintf("; a revisit of %s captured %s (%s at %d)", l.Original.URL, l.Original.Date.UTC().Format(time.RFC3339), l.Original.File, l.Original.Offset)
			}
			fmt.Fprintln(cmd.ErrOrStderr(), desc)
			out := cmd.OutOrStdout()
			if _, err := out.Write(l.Record.ResponseHeader); err != nil {
				return err
			}
			// The body as the record holds it: as the server sent it.
			body := l.Record.Payload
			if l.Record.WireBody != nil {
				body = l.Record.WireBody
			}
			_, err = out.Write(body)
			return err
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "data", "the crawl's data directory")
	cmd.Flags().StringVar(&at, "at", "", "the capture closest to this time (RFC 3339 or yyyymmddhhmmss); default the latest")
	s3.register(cmd.Flags())
	return cmd
}

func parseAt(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Parse("20060102150405", s)
}

func newWACZCmd() *cobra.Command {
	var dataDir, out, title string
	cmd := &cobra.Command{
		Use:   "wacz",
		Short: "Package a crawl's WARC files as a WACZ file, for replay",
		Long: `Package the crawl in --data as a WACZ 1.1.1 file (-o): its finished WARC
files under archive/, stored so that a replay can read them by range, the
capture index as indexes/index.cdxj, the HTML pages captured with status 200
as pages/pages.jsonl, and datapackage.json listing every file with its size
and SHA-256, whose own digest is datapackage-digest.json. ReplayWeb.page
opens it. Run it while no crawl runs on the directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := archive.Open(dataDir, canon.Config{})
			if err != nil {
				return err
			}
			defer a.Close()
			warcs, err := a.WARCFiles()
			if err != nil {
				return err
			}
			pages, err := a.Pages()
			if err != nil {
				return err
			}
			p := wacz.Package{
				WARCs: warcs, Title: cmp.Or(title, "weft crawl of "+filepath.Base(dataDir)), Software: version.Software(),
				Index: func(w io.Writer) error { _, err := a.WriteCDXJ(w); return err },
			}
			earlier, err := a.DedupSources()
			if err != nil {
				return err
			}
			for _, im := range earlier {
				// Its revisits may refer to captures in that package.
				if im.Kind == "wacz" {
					p.Requires = append(p.Requires, filepath.Base(im.Source))
				}
			}
			for _, pg := range pages {
				p.Pages = append(p.Pages, wacz.Page{URL: pg.URL, TS: pg.Date, Title: pg.Title})
			}
			// Written beside the target and renamed, so that a failure
			// leaves no half package under its name.
			tmp := out + ".partial"
			f, err := os.Create(tmp)
			if err != nil {
				return err
			}
			if err := wacz.Write(f, p); err != nil {
				f.Close()
				os.Remove(tmp)
				return err
			}
			if err := f.Close(); err != nil {
				os.Remove(tmp)
				return err
			}
			if err := os.Rename(tmp, out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d WARC files, %d pages\n", out, len(warcs), len(pages))
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data", "data", "the crawl's data directory")
	cmd.Flags().StringVarP(&out, "output", "o", "crawl.wacz", "the WACZ file to write")
	cmd.Flags().StringVar(&title, "title", "", "the collection's title (default: weft crawl of the data directory's name)")
	return cmd
}
