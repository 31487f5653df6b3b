package config

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// rateUnits are the units ParseRate reads, in bytes: decimal (k, M, G, as
// disks and networks count) and binary (Ki, Mi, Gi). A lower-case "kb"
// and the like are read as the decimal unit; "b" alone is a byte.
var rateUnits = map[string]int64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
}

// errRate is ParseRate's one complaint: it says what is accepted.
var errRate = errors.New(`must be a read rate greater than zero such as "50MB/s", "200MiB/s" or "1GB/s" (a bare number means bytes per second)`)

// ParseRate reads a rate of bytes per second ([backups] verify_rate):
// a number (a fraction allowed) with an optional unit (B, kB, MB, GB,
// KiB, MiB, GiB, in any case) and an optional "/s". The result is at
// least one byte per second; zero, negative and larger than 1 TB/s are
// refused.
func ParseRate(v string) (int64, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	s = strings.TrimSuffix(s, "/s")
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	mult, ok := rateUnits[unit]
	if !ok || num == "" {
		return 0, errRate
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(n) || n <= 0 {
		return 0, errRate
	}
	bytes := n * float64(mult)
	if bytes < 1 || bytes > 1e12 {
		return 0, errRate
	}
	return int64(bytes), nil
}
