package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// unitEnv reads the environment file the packaged unit loads
// (EnvironmentFile=-/etc/backupweb/env) as systemd does, so that
// check-config -as-service sees the variables the service will have and
// not those of the shell it runs in. A missing file gives no variables,
// as the unit's "-" prefix makes systemd ignore it.
func unitEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseEnvFile(f, path)
}

// parseEnvFile reads systemd's environment-file format (systemd.exec(5),
// EnvironmentFile=): one NAME=VALUE a line; blank lines, lines without
// "=" and lines starting with "#" or ";" are ignored; whitespace around
// the name and before the value is dropped; a value in single quotes is
// taken as written, one in double quotes reads \" \\ \$ and \` as the
// character; an unquoted value loses its trailing whitespace, and a
// trailing backslash joins the next line. Later lines win.
func parseEnvFile(r io.Reader, name string) (map[string]string, error) {
	env := map[string]string{}
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		for strings.HasSuffix(line, `\`) && sc.Scan() {
			n++
			line = strings.TrimSuffix(line, `\`) + sc.Text()
		}
		line = strings.TrimLeft(line, " \t")
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		key = strings.TrimSpace(key)
		if !validEnvName(key) {
			return nil, fmt.Errorf("%s:%d: %q is not a variable name", name, n, key)
		}
		v, err := envValue(strings.TrimLeft(value, " \t"))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", name, n, key, err)
		}
		env[key] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return env, nil
}

// envValue unquotes one value of an environment file.
func envValue(v string) (string, error) {
	if v == "" || (v[0] != '"' && v[0] != '\'') {
		return strings.TrimRight(v, " \t"), nil
	}
	q := v[0]
	var b strings.Builder
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == q:
			if rest := strings.TrimSpace(v[i+1:]); rest != "" {
				return "", errors.New("text after the closing quote")
			}
			return b.String(), nil
		case c == '\\' && q == '"' && i+1 < len(v) && strings.IndexByte("\"\\$`", v[i+1]) >= 0:
			i++
			b.WriteByte(v[i])
		default:
			b.WriteByte(c)
		}
	}
	return "", errors.New("the quote is not closed")
}

// validEnvName reports whether s is a variable name systemd accepts:
// letters, digits and underscores, not starting with a digit.
func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// serviceLookup answers lookups from env alone: the service has only the
// variables its unit gives it.
func serviceLookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}
