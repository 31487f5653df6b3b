package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/term"

	"github.com/backupweb/backupweb/internal/password"
)

// maxInputLine bounds how much of a piped standard input is read for one
// password; anything near it is far over bcrypt's 72 bytes anyway.
const maxInputLine = 4096

// errEmptyPassword refuses an empty password, which would let anyone in.
var errEmptyPassword = errors.New("the password is empty")

// tooLongError refuses a password bcrypt cannot hash whole. It wraps
// password.ErrTooLong but speaks to the person typing.
type tooLongError struct{}

func (tooLongError) Error() string {
	return "the password is longer than " + strconv.Itoa(password.MaxLen) +
		" bytes, which bcrypt cannot hash (it would ignore the rest); choose a shorter one"
}

func (tooLongError) Unwrap() error { return password.ErrTooLong }

// readPassword reads a new password for hash-password and user.
//
// On a terminal it prompts on standard error ("Password: ", then
// "Confirm password: " when confirm is set) without echoing, and the two
// entries must match. Otherwise it reads one line from standard input,
// without its "\n" or "\r\n" (end of input without a newline is fine); the
// rest of the input is ignored, so scripts can pipe a password in.
//
// An empty password, or one longer than password.MaxLen bytes, is refused
// (the latter with an error wrapping password.ErrTooLong). Errors never hold
// the password. The caller should clear the returned bytes when done.
func (c *cli) readPassword(confirm bool) ([]byte, error) {
	if f, ok := c.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return c.promptPassword(int(f.Fd()), confirm)
	}
	pw, err := readLine(c.stdin)
	if err != nil {
		return nil, err
	}
	if err := checkNewPassword(pw); err != nil {
		clear(pw)
		return nil, err
	}
	return pw, nil
}

// promptPassword asks for a password on the terminal fd, twice if confirm.
func (c *cli) promptPassword(fd int, confirm bool) ([]byte, error) {
	pw, err := c.promptOnce(fd, "Password: ")
	if err != nil {
		return nil, err
	}
	if err := checkNewPassword(pw); err != nil {
		clear(pw)
		return nil, err
	}
	if !confirm {
		return pw, nil
	}
	again, err := c.promptOnce(fd, "Confirm password: ")
	defer clear(again)
	if err != nil {
		clear(pw)
		return nil, err
	}
	if !bytes.Equal(pw, again) {
		clear(pw)
		return nil, errors.New("the passwords do not match")
	}
	return pw, nil
}

// promptOnce shows prompt on standard error and reads a line without echo.
func (c *cli) promptOnce(fd int, prompt string) ([]byte, error) {
	fmt.Fprint(c.stderr, prompt)
	pw, err := term.ReadPassword(fd)
	fmt.Fprintln(c.stderr) // the user's Enter was not echoed either
	if err != nil {
		return nil, fmt.Errorf("reading the password from the terminal: %w", err)
	}
	return pw, nil
}

// readLine reads the first line of r, without its "\n" or "\r\n".
func readLine(r io.Reader) ([]byte, error) {
	line, err := bufio.NewReader(io.LimitReader(r, maxInputLine)).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("reading the password from standard input: %w", err)
	}
	if len(line) == 0 {
		return nil, errors.New("no password on standard input")
	}
	if trimmed, ok := bytes.CutSuffix(line, []byte("\n")); ok {
		line = bytes.TrimSuffix(trimmed, []byte("\r"))
	}
	return line, nil
}

// checkNewPassword refuses passwords that must not be hashed.
func checkNewPassword(pw []byte) error {
	switch {
	case len(pw) == 0:
		return errEmptyPassword
	case len(pw) > password.MaxLen:
		return tooLongError{}
	}
	return nil
}
