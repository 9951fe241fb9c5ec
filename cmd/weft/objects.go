package main

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/weft-crawler/weft"

	"github.com/weft-crawler/weft/internal/objstore"
)

// s3Flags say where finished WARC files go (crawl, serve) or are read
// from (get). The keys come from the environment, not the command line,
// where other users of the machine could read them.
type s3Flags struct {
	endpoint, bucket, prefix, region string
}

func (f *s3Flags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.endpoint, "s3-endpoint", "", "S3-compatible object store for finished WARC files (http://host:port or https://host); keys from $WEFT_S3_ACCESS_KEY and $WEFT_S3_SECRET_KEY")
	fs.StringVar(&f.bucket, "s3-bucket", "", "bucket of the WARC files (it must exist)")
	fs.StringVar(&f.prefix, "s3-prefix", "", "prefix of their object keys, e.g. crawls/2026-11/")
	fs.StringVar(&f.region, "s3-region", "", "region, for stores that need one")
}

// set gives cfg the store the flags name, its keys from the environment.
func (f *s3Flags) set(cfg *weft.Config) {
	cfg.S3Endpoint, cfg.S3Bucket, cfg.S3Prefix, cfg.S3Region = f.endpoint, f.bucket, f.prefix, f.region
	cfg.S3AccessKey, cfg.S3SecretKey = os.Getenv("WEFT_S3_ACCESS_KEY"), os.Getenv("WEFT_S3_SECRET_KEY")
}

// store returns the object store the flags name, or nil if none.
func (f *s3Flags) store() (*objstore.Store, error) {
	if f.endpoint == "" && f.bucket == "" {
		return nil, nil
	}
	s, err := objstore.New(objstore.Config{
		Endpoint: f.endpoint, Bucket: f.bucket, Prefix: f.prefix, Region: f.region,
		AccessKey: os.Getenv("WEFT_S3_ACCESS_KEY"), SecretKey: os.Getenv("WEFT_S3_SECRET_KEY"),
	})
	if err != nil {
		return nil, usagef("--s3-endpoint, --s3-bucket: %v", err)
	}
	return s, nil
}
