package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"
)

// LoadCAFiles returns the system's roots with the certificates of the PEM
// files added: the pool for a TLSConfig's RootCAs that trusts a private
// certificate authority besides the public ones. (The SSL_CERT_FILE and
// SSL_CERT_DIR variables, which crypto/x509 reads, replace the system's
// roots instead.) A file that cannot be read, or that holds no
// certificate, is an error that names it. No files means the system's
// roots alone.
func LoadCAFiles(files ...string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		// No system roots (a bare container): the files are all there is
		// to trust, which is what their operator asked for.
		pool = x509.NewCertPool()
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("fetch: CA file: %w", err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("fetch: CA file %s: %s", f, noCertificate(data))
		}
	}
	return pool, nil
}

// noCertificate says why AppendCertsFromPEM took nothing from data.
func noCertificate(data []byte) string {
	block, _ := pem.Decode(data)
	switch {
	case block == nil:
		return "no PEM block in it (want -----BEGIN CERTIFICATE-----)"
	case block.Type != "CERTIFICATE":
		return fmt.Sprintf("no certificate in it (its first PEM block is a %s)", block.Type)
	default:
		return "no certificate in it that parses"
	}
}

// InsecureTLSKey returns the form in which Config.InsecureTLS matches an
// entry: "*" (every host), "*." and a domain (every host under it, at
// any depth, not the domain itself), an IP address (in brackets or not),
// or a host name as ResolveKey writes it ("bücher.test" is
// "xn--bcher-kva.test"). Anything else is an error.
func InsecureTLSKey(entry string) (string, error) {
	if entry == "*" {
		return entry, nil
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(entry, "["), "]")); err == nil {
		if a.Zone() != "" {
			return "", fmt.Errorf("%q: an address with a zone is never a URL's host", entry)
		}
		return a.Unmap().String(), nil
	}
	domain, wild := strings.CutPrefix(entry, "*.")
	if strings.Contains(domain, "*") {
		return "", fmt.Errorf("%q: a wildcard is \"*\" alone or \"*.\" before a domain", entry)
	}
	key, err := ResolveKey(domain)
	if err != nil {
		return "", err
	}
	if wild {
		return "*." + key, nil
	}
	return key, nil
}

// insecureHosts is the set Config.InsecureTLS names.
type insecureHosts struct {
	all     bool
	hosts   map[string]bool // exact names and addresses
	domains []string        // ".example.org": the hosts under it
}

func newInsecureHosts(entries []string) *insecureHosts {
	if len(entries) == 0 {
		return nil
	}
	s := &insecureHosts{hosts: map[string]bool{}}
	for _, e := range entries {
		k, _ := InsecureTLSKey(e) // checked by Validate
		switch {
		case k == "*":
			s.all = true
		case strings.HasPrefix(k, "*."):
			s.domains = append(s.domains, k[1:])
		default:
			s.hosts[k] = true
		}
	}
	return s
}

// match reports whether host (as net/http dials it: a URL's host without
// brackets) is in the set.
func (s *insecureHosts) match(host string) bool {
	if s == nil {
		return false
	}
	if s.all {
		return true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return s.hosts[a.Unmap().String()]
	}
	host = normalizeHost(host)
	if s.hosts[host] {
		return true
	}
	for _, d := range s.domains {
		if strings.HasSuffix(host, d) {
			return true
		}
	}
	return false
}

// acceptUnverified changes cfg, a copy for one handshake, its ServerName
// set, so that a certificate that fails verification is accepted and the failure
// kept in *failed: the verification crypto/tls would do is done all the
// same, against the same roots, so that the archive can say the
// certificate failed and why.
func acceptUnverified(cfg *tls.Config, failed *error) {
	roots, name, next := cfg.RootCAs, cfg.ServerName, cfg.VerifyConnection
	now := cfg.Time
	if now == nil {
		now = time.Now
	}
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		*failed = verifyServer(cs.PeerCertificates, name, roots, now())
		if next != nil {
			return next(cs)
		}
		return nil
	}
}

// verifyServer verifies a server's certificates for name (a host name or
// an IP address) as crypto/tls does, and returns the error it would have
// failed the handshake with; nil roots are the system's.
func verifyServer(certs []*x509.Certificate, name string, roots *x509.CertPool, now time.Time) error {
	if len(certs) == 0 {
		return errors.New("the server sent no certificate")
	}
	opts := x509.VerifyOptions{
		Roots:         roots,
		CurrentTime:   now,
		DNSName:       name,
		Intermediates: x509.NewCertPool(),
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := certs[0].Verify(opts)
	return err
}
