package app

import (
	"errors"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/ini"
)

// joined is implemented by the errors errors.Join makes.
type joined interface{ Unwrap() []error }

// record records the problems of err (a type's Validate), which may join
// several, as errors of s: each *auth.KeyError at its key (unless that key
// has an error already, such as an unset ${NAME}: one problem is enough),
// anything else at the section.
func record(s *ini.Section, err error) {
	if err == nil {
		return
	}
	errs := []error{err}
	if j, ok := err.(joined); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ke *auth.KeyError
		switch {
		case errors.As(e, &ke):
			if !s.Report().HasErrorsAt(s.Name(), ke.Key) {
				s.Errorf(ke.Key, "%v", ke.Err)
			}
		default:
			s.Errorf("", "%v", e)
		}
	}
}

// place records in s, in order, the problems a type found in its
// configuration or in the files it names: each *auth.Warning as a warning,
// anything else as an error; each at its place, *auth.FileError at its
// file and line, *auth.KeyError at its key, anything else at the section.
func place(s *ini.Section, problems []error) {
	for _, err := range problems {
		sev := ini.Error
		var w *auth.Warning
		if errors.As(err, &w) {
			sev, err = ini.Warning, w.Err
		}
		var fe *auth.FileError
		if errors.As(err, &fe) {
			s.Report().Add(ini.Problem{Severity: sev, File: fe.File, Line: fe.Line, Msg: fe.Err.Error()})
			continue
		}
		key := ""
		var ke *auth.KeyError
		if errors.As(err, &ke) {
			key, err = ke.Key, ke.Err
		}
		if sev == ini.Warning {
			s.Warnf(key, "%v", err)
		} else {
			s.Errorf(key, "%v", err)
		}
	}
}
