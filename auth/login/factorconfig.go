package login

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/backupweb/backupweb/factors"
	"github.com/backupweb/backupweb/internal/ini"
)

// SecondFactor is the value of second_factor.
type SecondFactor int

const (
	// SecondFactorOff: the password alone signs in, as before (default).
	SecondFactorOff SecondFactor = iota
	// SecondFactorOptional: users who have a second factor must give it;
	// the others sign in with their password.
	SecondFactorOptional
	// SecondFactorRequired: every user must give a second factor; a user
	// without one enrols right after the password, before anything else.
	SecondFactorRequired
)

// String returns the configuration's spelling.
func (m SecondFactor) String() string {
	switch m {
	case SecondFactorOptional:
		return "optional"
	case SecondFactorRequired:
		return "required"
	default:
		return "off"
	}
}

// ParseSecondFactor reads a second_factor value: off (or empty),
// optional or required.
func ParseSecondFactor(v string) (SecondFactor, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "off":
		return SecondFactorOff, nil
	case "optional":
		return SecondFactorOptional, nil
	case "required":
		return SecondFactorRequired, nil
	}
	return SecondFactorOff, errors.New("must be off, optional or required")
}

// checkFactorsFile reads the factors file as the provider will, without
// the secret key (which Load does not have, so secrets are not decrypted
// here): problems of its lines are warnings at their file and line (the
// service starts, and refuses those users), as is a file others can read.
func checkFactorsFile(s *ini.Section, path string) {
	if _, err := os.Stat(path); err != nil {
		if !os.IsNotExist(err) {
			s.Errorf("factors_file", "cannot read the factors file %s: %v", ini.ShowPath(path), err)
		}
		return // no file: nobody has a factor yet
	}
	ini.CheckPrivate(s.Report(), path, "second-factor secrets")
	_, err := factors.Read(path, nil)
	if err == nil {
		return
	}
	for _, e := range flatten(err) {
		var le *factors.LineError
		if errors.As(e, &le) {
			s.Report().Warnf(le.File, le.Line, "", "", "%s", fmt.Sprintf("%v (the user cannot sign in until the line is fixed or `backupweb user factors -reset` is run)", le.Err))
			continue
		}
		s.Warnf("factors_file", "%v (nobody with a second factor can sign in until it is fixed)", e)
	}
}
