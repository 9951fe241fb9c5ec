// Package version holds weft's version: the one place it is set, read by
// --version, the default User-Agent and the software named in the WARC
// and WACZ files a crawl writes.
package version

// Version is weft's version. A release build sets it with
//
//	-ldflags "-X github.com/weft-crawler/weft/internal/version.Version=1.2.3"
//
// It is a variable only so that the linker can set it.
var Version = "0.1.0-dev"

// Software names weft and its version as a product token, "weft/1.2.3":
// the form of a warcinfo record's software field ("Heritrix/3.4.0") and of
// the first token of weft's default User-Agent.
func Software() string { return "weft/" + Version }
