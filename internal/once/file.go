package once

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/backupweb/backupweb/internal/atomicfile"
)

// fileHeader is the first line of a table's file; every other line is
// one token: the hexadecimal SHA-256 digest of kind and token, a space,
// and its expiry in Unix nanoseconds.
const fileHeader = "backupweb single-use tokens 1"

// load reads t.file into t.seen, keeping the tokens that have not expired.
// A missing file is an empty table; anything else that is not what save
// writes is an error naming the file and line.
func (t *Table) load() error {
	data, err := os.ReadFile(t.file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("once: reading the spent tokens in %s: %w", t.file, err)
	}
	now := t.now()
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 1
	for ; sc.Scan(); n++ {
		line := sc.Text()
		if n == 1 {
			if line != fileHeader {
				return t.broken(n, "the first line is not "+strconv.Quote(fileHeader))
			}
			continue
		}
		key, exp, ok := parseLine(line)
		if !ok {
			return t.broken(n, "not a digest and an expiry")
		}
		if now.Before(exp) {
			t.seen[key] = exp
			if t.soonest.IsZero() || exp.Before(t.soonest) {
				t.soonest = exp
			}
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return t.broken(n, "the line is longer than a spent token's")
	}
	if sc.Err() != nil || len(data) == 0 || data[len(data)-1] != '\n' {
		return t.broken(0, "it is empty or cut short")
	}
	if len(t.seen) > t.max {
		return t.broken(0, fmt.Sprintf("it holds %d unexpired tokens, more than the %d a table holds", len(t.seen), t.max))
	}
	return nil
}

// broken is the error of a file that is not what save writes.
func (t *Table) broken(line int, why string) error {
	where := t.file
	if line > 0 {
		where += ":" + strconv.Itoa(line)
	}
	return fmt.Errorf("once: %s: %s; the file is written by backupweb only. It keeps single-use tokens (TOTP steps, second-factor sign-ins) spent in the last minutes: stop the service, wait 10 minutes so that every one has expired, then remove it", where, why)
}

// parseLine reads one token's line.
func parseLine(line string) (key [sha256.Size]byte, exp time.Time, ok bool) {
	digest, nanos, found := strings.Cut(line, " ")
	if !found || len(digest) != 2*sha256.Size {
		return key, exp, false
	}
	if _, err := hex.Decode(key[:], []byte(digest)); err != nil {
		return key, exp, false
	}
	ns, err := strconv.ParseInt(nanos, 10, 64)
	if err != nil || ns <= 0 {
		return key, exp, false
	}
	return key, time.Unix(0, ns), true
}

// save writes the unexpired tokens to t.file atomically (mode 0600, see
// package atomicfile). The lock must be held.
func (t *Table) save(now time.Time) error {
	var b bytes.Buffer
	b.Grow(len(fileHeader) + 1 + len(t.seen)*(2*sha256.Size+21))
	b.WriteString(fileHeader + "\n")
	for k, exp := range t.seen {
		if !now.Before(exp) {
			continue
		}
		b.WriteString(hex.EncodeToString(k[:]))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(exp.UnixNano(), 10))
		b.WriteByte('\n')
	}
	if err := atomicfile.Write(t.file, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("once: writing the spent tokens in %s: %w", t.file, err)
	}
	return nil
}
