// Package objstore keeps finished WARC files in an S3-compatible object
// store (minio-go): an upload is checked by the server against the MD5 of
// every part it receives and then by the object's size, and records are
// read back by byte range, so a lookup fetches one record, not a file.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Config says where objects go. Endpoint and Bucket are required.
type Config struct {
	// Endpoint is the store's URL, "http://host:port" or
	// "https://host"; plain "host:port" means https.
	Endpoint string
	// Bucket holds the objects; it must exist.
	Bucket string
	// Prefix is put before every object key ("crawls/2026/"); "" means
	// none.
	Prefix string
	// AccessKey and SecretKey sign requests; both empty means anonymous.
	AccessKey, SecretKey string
	// Region is sent to stores that need one; "" lets the client ask.
	Region string
}

// Validate reports the first missing or malformed field.
func (c Config) Validate() error {
	if c.Endpoint == "" {
		return errors.New("objstore: no endpoint")
	}
	if _, _, err := endpoint(c.Endpoint); err != nil {
		return err
	}
	if c.Bucket == "" {
		return errors.New("objstore: no bucket")
	}
	if (c.AccessKey == "") != (c.SecretKey == "") {
		return errors.New("objstore: an access key needs its secret key, and the other way round")
	}
	return nil
}

// endpoint splits "scheme://host:port" into host:port and whether TLS is
// used.
func endpoint(e string) (string, bool, error) {
	if !strings.Contains(e, "://") {
		return e, true, nil
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
		return "", false, fmt.Errorf("objstore: endpoint %q: want http://host:port or https://host", e)
	}
	return u.Host, u.Scheme == "https", nil
}

// Store is a bucket and a key prefix. It is safe for concurrent use.
type Store struct {
	client *minio.Client
	bucket string
	prefix string
}

// New returns a Store for cfg. It makes no request.
func New(cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, secure, _ := endpoint(cfg.Endpoint)
	var creds *credentials.Credentials
	if cfg.AccessKey != "" {
		creds = credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, "")
	} else {
		creds = credentials.New(&credentials.Static{}) // anonymous
	}
	c, err := minio.New(host, &minio.Options{Creds: creds, Secure: secure, Region: cfg.Region})
	if err != nil {
		return nil, fmt.Errorf("objstore: %w", err)
	}
	return &Store{client: c, bucket: cfg.Bucket, prefix: cfg.Prefix}, nil
}

// Key is the object key of a file of that base name.
func (s *Store) Key(name string) string { return s.prefix + path.Base(name) }

// Check asks the store whether the bucket exists, for a clear error at
// start rather than at the first upload.
func (s *Store) Check(ctx context.Context) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	switch {
	case err != nil:
		return fmt.Errorf("objstore: bucket %s: %w", s.bucket, err)
	case !ok:
		return fmt.Errorf("objstore: bucket %s does not exist", s.bucket)
	}
	return nil
}

// Upload stores the file at localPath under Key(its base name) and returns
// the key. The server checks each part against the MD5 sent with it; the
// object is then checked to hold as many bytes as the file. Uploading a
// file again replaces the object with the same bytes.
func (s *Store) Upload(ctx context.Context, localPath string) (string, error) {
	key := s.Key(localPath)
	f, err := os.Open(localPath)
	if err != nil {
		return "", fmt.Errorf("objstore: upload %s: %w", localPath, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("objstore: upload %s: %w", localPath, err)
	}
	info, err := s.client.PutObject(ctx, s.bucket, key, f, st.Size(), minio.PutObjectOptions{
		ContentType:    "application/warc",
		SendContentMd5: true,
		// The MD5 of every part is the check; a SHA-256 payload hash on top
		// costs a second pass over each part, and some S3 servers do not
		// take it on multipart uploads.
		DisableContentSha256: true,
	})
	if err != nil {
		return "", fmt.Errorf("objstore: upload %s to %s/%s: %w", localPath, s.bucket, key, err)
	}
	if info.Size != st.Size() {
		return "", fmt.Errorf("objstore: upload %s: the store took %d bytes of %d", localPath, info.Size, st.Size())
	}
	obj, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return "", fmt.Errorf("objstore: check %s/%s: %w", s.bucket, key, err)
	}
	if obj.Size != st.Size() {
		return "", fmt.Errorf("objstore: check %s/%s: %d bytes stored, the file has %d", s.bucket, key, obj.Size, st.Size())
	}
	return key, nil
}

// Open returns length bytes of the object at key from offset (to its end
// if length is not positive).
func (s *Store) Open(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	var opts minio.GetObjectOptions
	end := int64(0) // SetRange(start, 0) means to the end
	if length > 0 {
		end = offset + length - 1
	}
	if offset > 0 || length > 0 {
		if err := opts.SetRange(offset, end); err != nil {
			return nil, fmt.Errorf("objstore: %s: %w", key, err)
		}
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, fmt.Errorf("objstore: get %s/%s: %w", s.bucket, key, err)
	}
	return obj, nil
}

// String names the bucket and prefix, the same wherever the store is
// reached from.
func (s *Store) String() string {
	return "S3 bucket " + s.bucket + " under prefix " + strconv.Quote(s.prefix)
}

// Put stores size bytes from r at the key name under the prefix (name may
// hold '/'), checked as Upload checks a file.
func (s *Store) Put(ctx context.Context, name string, r io.Reader, size int64) error {
	key := s.prefix + name
	info, err := s.client.PutObject(ctx, s.bucket, key, r, size, minio.PutObjectOptions{
		ContentType: "application/octet-stream", SendContentMd5: true, DisableContentSha256: true,
	})
	if err != nil {
		return fmt.Errorf("objstore: put %s/%s: %w", s.bucket, key, err)
	}
	if info.Size != size {
		return fmt.Errorf("objstore: put %s/%s: the store took %d bytes of %d", s.bucket, key, info.Size, size)
	}
	return nil
}

// Get reads the whole object at the key name under the prefix.
func (s *Store) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	return s.Open(ctx, s.prefix+name, 0, 0)
}

// Delete removes the object at the key name under the prefix; one not
// there is no error.
func (s *Store) Delete(ctx context.Context, name string) error {
	if err := s.client.RemoveObject(ctx, s.bucket, s.prefix+name, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("objstore: delete %s/%s: %w", s.bucket, s.prefix+name, err)
	}
	return nil
}
