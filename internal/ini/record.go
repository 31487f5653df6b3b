package ini

import "errors"

// Placed is the one shape of a configuration problem found beyond the
// file's syntax: by a type's Validate, or by the parser of a file the
// configuration names (the user file, the factors file). It is recognised
// by behaviour, so those packages need not import this one.
type Placed interface {
	error
	// Place says where the problem is: a line of a named file (file set;
	// line 0 for the whole file), or a key of the section being read (key
	// set), or the section itself (all empty).
	Place() (file string, line int, key string)
	// Detail says what is wrong, without the place.
	Detail() string
}

// Warner is implemented by a problem that says whether it is only a
// warning: the configuration can still be used.
type Warner interface {
	error
	IsWarning() bool
}

// Record records in s's report, in order, the problems of errs, each one
// or several joined (errors.Join): each at its place (Placed), as a warning
// when it says so (Warner), else as an error. A problem with no place is an
// error of the section. An error at a key that has one already (such as an
// unset ${NAME}) is left out: one problem a value is enough.
func (s *Section) Record(errs ...error) {
	for _, err := range errs {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			s.Record(j.Unwrap()...)
			continue
		}
		if err != nil {
			s.record(err)
		}
	}
}

// record records one problem (see Record).
func (s *Section) record(err error) {
	sev := Error
	if w, ok := errors.AsType[Warner](err); ok && w.IsWarning() {
		sev = Warning
	}
	p, ok := errors.AsType[Placed](err)
	if !ok {
		s.at(sev, "", err.Error())
		return
	}
	file, line, key := p.Place()
	switch {
	case file != "":
		s.Report().Add(Problem{Severity: sev, File: file, Line: line, Msg: p.Detail()})
	case key != "" && sev == Error && s.Report().HasErrorsAt(s.name, key):
	default:
		s.at(sev, key, p.Detail())
	}
}

// at records msg at key of s with severity sev.
func (s *Section) at(sev Severity, key, msg string) {
	if sev == Warning {
		s.Warnf(key, "%s", msg)
		return
	}
	s.Errorf(key, "%s", msg)
}
