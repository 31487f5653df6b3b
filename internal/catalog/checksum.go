package catalog

import (
	"bufio"
	"encoding/hex"
	"io"
	"os"
	"strings"
)

// applySums gives each backup of one folder (opened as dir) the SHA-256 its
// checksum files name: NAME.sha256 first, then a SHA256SUMS line. A
// checksum file that cannot be read, or a line that is not a digest and a
// name, gives nothing.
func applySums(dir *os.Root, backups []Backup, sums []string) {
	index := make(map[string]int, len(backups))
	for i, b := range backups {
		index[b.Name] = i
	}
	set := func(name, sum string, at stamp, override bool) {
		if i, ok := index[name]; ok && (override || backups[i].SHA256 == "") {
			backups[i].SHA256, backups[i].sumTimes = sum, at
			backups[i].SumStale = at.olderThan(backups[i])
		}
	}
	for _, s := range sums {
		if s == sumsFile {
			continue
		}
		name := strings.TrimSuffix(s, sumSuffix)
		readSums(dir, s, func(sum, named string, at stamp) {
			if named == "" || named == name {
				set(name, sum, at, true)
			}
		})
	}
	for _, s := range sums {
		if s == sumsFile {
			readSums(dir, s, func(sum, named string, at stamp) { set(named, sum, at, false) })
		}
	}
}

// readSums calls fn with each digest in the checksum file name, the file
// name its line gives ("" for a bare digest) and the checksum file's
// times, for the lines in sha256sum's
// format: "HASH  NAME" (text) or "HASH *NAME" (binary), a name inside
// this folder ("./" allowed before it).
func readSums(dir *os.Root, name string, fn func(sum, named string, at stamp)) {
	f, file, err := openFile(dir, name)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxSumsBytes))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		sum, named, ok := parseSumLine(sc.Text())
		if ok {
			fn(sum, named, stampOf(file))
		}
	}
}

// parseSumLine reads one line of a checksum file.
func parseSumLine(line string) (sum, name string, ok bool) {
	line = strings.TrimRight(line, "\r")
	if len(line) < 64 {
		return "", "", false
	}
	sum, rest := strings.ToLower(line[:64]), line[64:]
	if _, err := hex.DecodeString(sum); err != nil {
		return "", "", false
	}
	if strings.TrimSpace(rest) == "" {
		return sum, "", true
	}
	if !strings.HasPrefix(rest, "  ") && !strings.HasPrefix(rest, " *") {
		return "", "", false
	}
	name = strings.TrimPrefix(rest[2:], "./")
	if !validName(name) {
		return "", "", false
	}
	return sum, name, true
}
