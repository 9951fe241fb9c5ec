package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Table tags: the first byte of every key.
const (
	tagMeta  = 'M'
	tagHost  = 'H'
	tagURL   = 'U'
	tagQueue = 'Q'
	tagFront = 'F'
	tagRobot = 'R'
)

// hostEnd ends the host in a key. It sorts below every byte a host name may
// contain, so one host's keys never interleave with a longer host's.
const hostEnd = 0x00

// checkHost rejects a host that cannot be put in a key.
func checkHost(host string) error {
	if host == "" {
		return errors.New("empty host")
	}
	if strings.IndexByte(host, hostEnd) >= 0 {
		return fmt.Errorf("host %q contains a NUL byte", host)
	}
	return nil
}

// appendHostPrefix appends tag part host 0x00.
func appendHostPrefix(dst []byte, tag byte, part uint16, host string) []byte {
	dst = append(dst, tag)
	dst = binary.BigEndian.AppendUint16(dst, part)
	dst = append(dst, host...)
	return append(dst, hostEnd)
}

func appendMetaKey(dst []byte, name string) []byte {
	return append(append(dst, tagMeta), name...)
}

func appendHostKey(dst []byte, part uint16, host string) []byte {
	return appendHostPrefix(dst, tagHost, part, host)
}

// appendRobotsKey appends the key of a host's robots.txt record for
// scheme. The scheme follows the host's 0x00, so one host's records stay
// one range; a record of the time before files were kept by scheme has
// none.
func appendRobotsKey(dst []byte, part uint16, host, scheme string) []byte {
	return append(appendHostPrefix(dst, tagRobot, part, host), scheme...)
}

func appendURLKey(dst []byte, part uint16, host string, hash [16]byte) []byte {
	return append(appendHostPrefix(dst, tagURL, part, host), hash[:]...)
}

func appendQueueKey(dst []byte, part uint16, host string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(appendHostPrefix(dst, tagQueue, part, host), seq)
}

func appendFrontPrefix(dst []byte, prio uint8) []byte {
	return append(dst, tagFront, prio)
}

func appendFrontKey(dst []byte, prio uint8, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(appendFrontPrefix(dst, prio), seq)
}

func appendPartPrefix(dst []byte, tag byte, part uint16) []byte {
	return binary.BigEndian.AppendUint16(append(dst, tag), part)
}

// prefixEnd returns the smallest key greater than every key with the given
// prefix (the exclusive upper bound of a prefix scan), or nil if there is
// none (a prefix of all 0xff bytes). It does not modify prefix.
func prefixEnd(prefix []byte) []byte {
	end := bytes.Clone(prefix)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// hostKey is a decoded key of a per-host table.
type hostKey struct {
	tag  byte
	part uint16
	host string
	rest []byte // what follows the 0x00: the URL hash or the queue seq
}

// parseHostKey splits tag part host 0x00 rest. The host is the bytes up to
// the first 0x00 after the partition (whose own bytes may be 0x00).
func parseHostKey(k []byte) (hostKey, error) {
	if len(k) < 4 {
		return hostKey{}, fmt.Errorf("key %s is too short", fmtKey(k))
	}
	i := bytes.IndexByte(k[3:], hostEnd)
	if i < 0 {
		return hostKey{}, fmt.Errorf("key %s has no host terminator", fmtKey(k))
	}
	if i == 0 {
		return hostKey{}, fmt.Errorf("key %s has an empty host", fmtKey(k))
	}
	return hostKey{
		tag:  k[0],
		part: binary.BigEndian.Uint16(k[1:3]),
		host: string(k[3 : 3+i]),
		rest: k[3+i+1:],
	}, nil
}

// parseQueueKey returns the parts of a queue key.
func parseQueueKey(k []byte) (part uint16, host string, seq uint64, err error) {
	hk, err := parseHostKey(k)
	if err != nil {
		return 0, "", 0, err
	}
	if hk.tag != tagQueue || len(hk.rest) != 8 {
		return 0, "", 0, fmt.Errorf("key %s is not a queue key", fmtKey(k))
	}
	return hk.part, hk.host, binary.BigEndian.Uint64(hk.rest), nil
}

// parseFrontKey returns the priority and seq of a front key.
func parseFrontKey(k []byte) (prio uint8, seq uint64, err error) {
	if len(k) != 10 || k[0] != tagFront {
		return 0, 0, fmt.Errorf("key %s is not a front key", fmtKey(k))
	}
	return k[1], binary.BigEndian.Uint64(k[2:]), nil
}

// fmtKey renders a key for an error message: its table, partition, host and
// suffix in readable form, or the raw bytes quoted when it fits no table.
func fmtKey(k []byte) string {
	if len(k) == 0 {
		return `""`
	}
	switch k[0] {
	case tagMeta:
		return fmt.Sprintf("meta %q", k[1:])
	case tagFront:
		if len(k) == 10 {
			return fmt.Sprintf("front prio=%d seq=%d", k[1], binary.BigEndian.Uint64(k[2:]))
		}
	case tagHost, tagURL, tagQueue, tagRobot, tagPrior, tagHostState:
		if len(k) < 4 {
			break
		}
		i := bytes.IndexByte(k[3:], hostEnd)
		if i < 0 {
			break
		}
		part := binary.BigEndian.Uint16(k[1:3])
		host := k[3 : 3+i]
		rest := k[3+i+1:]
		switch {
		case k[0] == tagHost && len(rest) == 0:
			return fmt.Sprintf("host part=%d host=%q", part, host)
		case k[0] == tagPrior && len(rest) == 0:
			return fmt.Sprintf("prior part=%d host=%q", part, host)
		case k[0] == tagHostState && len(rest) == 0:
			return fmt.Sprintf("host state part=%d host=%q", part, host)
		case k[0] == tagRobot && len(rest) == 0:
			return fmt.Sprintf("robots part=%d host=%q", part, host)
		case k[0] == tagRobot:
			return fmt.Sprintf("robots part=%d host=%q scheme=%q", part, host, rest)
		case k[0] == tagURL && len(rest) == 16:
			return fmt.Sprintf("url part=%d host=%q hash=%s", part, host, hex.EncodeToString(rest))
		case k[0] == tagQueue && len(rest) == 8:
			return fmt.Sprintf("queue part=%d host=%q seq=%d", part, host, binary.BigEndian.Uint64(rest))
		}
	case tagDue:
		var e DueEntry
		if parseDueKey(k, &e) == nil {
			return fmt.Sprintf("recrawl part=%d due=%s host=%q hash=%s", e.Part, e.Due.UTC().Format(time.RFC3339Nano), e.Host, hex.EncodeToString(e.Hash[:]))
		}
	case tagDigest, tagCapture:
		if s, ok := fmtCaptureKey(k); ok {
			return s
		}
	}
	return fmt.Sprintf("%q", k)
}
