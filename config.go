package backupweb

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/backupweb/backupweb/internal/app"
	"github.com/backupweb/backupweb/internal/ini"
)

// ReadConfig returns the [authentication] section of the INI file at path
// as the map NewProvider takes, its values as written (NewProvider expands
// ${NAME}). The file is read under the program's rules, which fail closed:
// it must exist and be readable (a missing file, a dangling link or a
// folder is an error naming the path); a near miss of the section's name
// ([Authentication], [auth]) and an [authentication] key found in another
// section (its header commented out) are errors; a section without a type
// key is an error. Only a file without an [authentication] section at all
// gives type none: {"type": "none"}. The other sections are not read.
func ReadConfig(path string) (map[string]string, error) {
	m, rep := app.ReadSection(path)
	if err := report(rep, nil); err != nil {
		return nil, err
	}
	return m, nil
}

// report logs rep's warnings to log (nil: not at all) and returns an
// error holding every error problem, one a line, located as check-config
// locates them (file, line, section, key; no line for keys given as a
// map), or nil when there is none.
func report(rep *ini.Report, log *slog.Logger) error {
	var lines []string
	for _, p := range rep.Problems() {
		if p.File == "" {
			p.Line = 0 // a line of the section SectionOf wrote, not of a file
		}
		text := strings.TrimPrefix(strings.TrimPrefix(p.String(), "error: "), "warning: ")
		if p.Severity == ini.Warning {
			if log != nil {
				log.Warn("backupweb: configuration: " + text)
			}
			continue
		}
		lines = append(lines, text)
	}
	switch len(lines) {
	case 0:
		return nil
	case 1:
		return errors.New("backupweb: " + lines[0])
	}
	return errors.New("backupweb: invalid configuration:\n" + strings.Join(lines, "\n"))
}
