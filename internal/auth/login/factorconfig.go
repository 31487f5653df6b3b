package login

import (
	"errors"
	"fmt"
	"os"

	"github.com/backupweb/backupweb/internal/auth"
	"github.com/backupweb/backupweb/internal/auth/secondfactor"
	"github.com/backupweb/backupweb/internal/factors"
	"github.com/backupweb/backupweb/internal/fspath"
)

// SecondFactor is the value of second_factor (package secondfactor's
// Mode).
type SecondFactor = secondfactor.Mode

// The values of second_factor.
const (
	// SecondFactorOff: the password alone signs in, as before (default).
	SecondFactorOff = secondfactor.Off
	// SecondFactorOptional: users who have a second factor must give it;
	// the others sign in with their password.
	SecondFactorOptional = secondfactor.Optional
	// SecondFactorRequired: every user must give a second factor; a user
	// without one enrols right after the password, before anything else.
	SecondFactorRequired = secondfactor.Required
)

// ParseSecondFactor reads a second_factor value: off (or empty),
// optional or required.
func ParseSecondFactor(v string) (SecondFactor, error) { return secondfactor.ParseMode(v) }

// ReadFactors reads the factors file (FactorsFile, by default beside the
// user file) as the provider will, when a second factor is on, without the
// secret key (secrets are not decrypted here). path is the file read, ""
// when there is none (nobody has a factor yet), for the caller to check
// that it is private to its owner. A file that cannot be looked at is an
// error (an *auth.KeyError at factors_file); the problems of its lines are
// warnings (*auth.Warning) at their file and line (the service starts, and
// refuses those users), others warnings at factors_file.
func (c Config) ReadFactors() (path string, problems []error) {
	if c.SecondFactor == SecondFactorOff || !c.hasUsers() || c.FactorsFile == "" && c.UsersFile == "" {
		return "", nil
	}
	path = c.WithDefaults().FactorsFile
	if _, err := os.Stat(path); err != nil {
		if !os.IsNotExist(err) {
			problems = []error{&auth.KeyError{Key: "factors_file", Err: fmt.Errorf("cannot read the factors file %s: %v", fspath.Show(path), err)}}
		}
		return "", problems
	}
	_, err := factors.Read(path, nil)
	if err == nil {
		return path, nil
	}
	for _, e := range flatten(err) {
		var le *factors.LineError
		if errors.As(e, &le) {
			problems = append(problems, &auth.Warning{Err: &auth.FileError{File: le.File, Line: le.Line, Err: fmt.Errorf("%v (the user cannot sign in until the line is fixed or `backupweb user factors -reset` is run)", le.Err)}})
			continue
		}
		problems = append(problems, &auth.Warning{Err: &auth.KeyError{Key: "factors_file", Err: fmt.Errorf("%v (nobody with a second factor can sign in until it is fixed)", e)}})
	}
	return path, problems
}
