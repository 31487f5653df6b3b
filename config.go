package backupweb

import (
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
// key is an error, and so is a file without an [authentication] section
// at all (the wrong file, an empty one): an error that wraps ErrNoType and
// names the file. (The program reads such a file as type none, as the
// specification says; a library never opens a door by default.) The
// other sections are not read. Every error is a *ConfigError, or several
// joined; a missing file's wraps fs.ErrNotExist.
func ReadConfig(path string) (map[string]string, error) {
	m, present, rep := app.ReadSection(path)
	if err := report(rep, nil); err != nil {
		return nil, err
	}
	if !present {
		return nil, &ConfigError{File: path, Msg: "has no [" + app.Section + "] section; add one with a line type = <" +
			strings.Join(app.Names(), "|") + "> (none must be named: it is never the library's default)", Err: ErrNoType}
	}
	return m, nil
}

// ReadLDAP returns the [ldap] section of the INI file at path as the map
// Options.LDAP takes, its values as written (NewProvider expands
// ${NAME}), for a configuration whose [authentication] has users = ldap.
// The file is read under the program's rules (see ReadConfig); a file
// without an [ldap] section is an error naming the file. Every error is a
// *ConfigError, or several joined.
func ReadLDAP(path string) (map[string]string, error) {
	m, present, rep := app.ReadLDAPSection(path)
	if err := report(rep, nil); err != nil {
		return nil, err
	}
	if !present {
		return nil, &ConfigError{File: path, Msg: "has no [" + app.LDAPSection + "] section; users = ldap needs one with url, bind_dn, bind_password and base_dn"}
	}
	return m, nil
}

// report logs rep's warnings to log (nil: not at all) and returns every
// error problem as a *ConfigError (several joined, one a line), located as
// check-config locates them (file, line, section, key; no line for keys
// given as a map), or nil when there is none.
func report(rep *ini.Report, log *slog.Logger) error {
	var errs configErrors
	for _, p := range rep.Problems() {
		if p.File == "" {
			p.Line = 0 // a line of the section SectionOf wrote, not of a file
		}
		if p.Severity == ini.Warning {
			if log != nil {
				log.Warn("backupweb: configuration: " + strings.TrimPrefix(p.String(), "warning: "))
			}
			continue
		}
		errs = append(errs, problemError(p))
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errs
}
