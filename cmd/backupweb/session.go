package main

import (
	"context"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/backupweb/backupweb/internal/config"
	"github.com/backupweb/backupweb/internal/redisstore"
	"github.com/backupweb/backupweb/internal/session"
)

// sessionUsageText is the help of `backupweb session`.
const sessionUsageText = `Usage: backupweb session ACTION -config F ...

Actions:
  list   -config F [-user NAME]   print id, user, type, created, last seen, client
  revoke -config F ID | -user NAME
         end one session, or every session of a user (store = redis)

Flags:
  -config F    the service's configuration: its [server] store and state_dir, or [redis]
  -user NAME   list: only NAME's sessions; revoke: every session of NAME

The id is the start of the session's store key, itself a keyed hash of the
session id: neither the cookie's secret nor enough to rebuild it.
With store = redis, revoke ends sessions at once on every instance. With
store = file, list reads state_dir while the service runs, and revoke leaves
the request there: the service ends the sessions within two seconds.
`

// sessionArgs is a parsed `backupweb session` command line.
type sessionArgs struct {
	action, config, user, id string
}

// runSession implements `backupweb session list|revoke`.
func runSession(c *cli, args []string) int {
	sa, code, ok := parseSessionArgs(c, args)
	if !ok {
		return code
	}
	if err := sessionAction(c, sa); err != nil {
		fmt.Fprintln(c.stderr, "backupweb session "+sa.action+": "+err.Error())
		return exitError
	}
	return exitOK
}

// parseSessionArgs reads the action, flags and id; false: stop with code.
func parseSessionArgs(c *cli, args []string) (sessionArgs, int, bool) {
	var sa sessionArgs
	if len(args) == 0 {
		fmt.Fprint(c.stderr, sessionUsageText)
		return sa, exitUsage, false
	}
	sa.action, args = args[0], args[1:]
	switch sa.action {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stderr, sessionUsageText)
		return sa, exitOK, false
	case "list", "revoke":
	default:
		fmt.Fprintf(c.stderr, "backupweb session: unknown action %q\n\n%s", sa.action, sessionUsageText)
		return sa, exitUsage, false
	}
	flags := c.flagSet("session " + sa.action)
	flags.Usage = func() { fmt.Fprint(c.stderr, sessionUsageText) }
	flags.StringVar(&sa.config, "config", "", "the service's configuration (required)")
	flags.StringVar(&sa.user, "user", "", "only this user's sessions")
	var rest []string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		rest, args = []string{args[0]}, args[1:]
	}
	// A listed id is base64url and may start with '-': taken for a flag,
	// revoke would refuse one id in 32. It is the id wherever it stands.
	var ids []string
	ids, args = sessionIDArgs(flags, args)
	rest = append(rest, ids...)
	if code, ok := parseFlags(flags, args); !ok {
		return sa, code, false
	}
	rest = append(rest, flags.Args()...)
	usageErr := func(msg string) (sessionArgs, int, bool) {
		fmt.Fprintln(c.stderr, "backupweb session "+sa.action+": "+msg)
		return sa, exitUsage, false
	}
	switch {
	case sa.config == "":
		return usageErr("-config F is required")
	case len(rest) > 1, sa.action == "list" && len(rest) > 0:
		return usageErr("too many arguments")
	case sa.action == "revoke" && (len(rest) == 1) == (sa.user != ""):
		return usageErr("give one session id, or -user NAME")
	case len(rest) == 1:
		sa.id = rest[0]
	}
	return sa, exitOK, true
}

// sessionIDArgs takes out of args the session ids that start with '-'
// (the form of a listed id, and not the value of one of flags) and
// returns them and the rest. "--" ends the flags as usual.
func sessionIDArgs(flags *flag.FlagSet, args []string) (ids, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ids, append(rest, args[i:]...)
		case flags.Lookup(strings.TrimLeft(a, "-")) != nil && i+1 < len(args):
			// A flag given without '=' (all of them take a value).
			rest = append(rest, a, args[i+1])
			i++
		case strings.HasPrefix(a, "-") && isSessionID(a):
			ids = append(ids, a)
		default:
			rest = append(rest, a)
		}
	}
	return ids, rest
}

// isSessionID reports whether s has the form of a listed session id:
// session.IDLen characters of unpadded base64url.
func isSessionID(s string) bool {
	_, err := base64.RawURLEncoding.Strict().DecodeString(s)
	return len(s) == session.IDLen && err == nil
}

// sessionAction lists or ends sessions in the store the configuration
// names.
func sessionAction(c *cli, sa sessionArgs) error {
	cfg := config.Load(sa.config, c.lookupEnv)
	if err := cfg.Report.Err(); err != nil {
		return err
	}
	if cfg.Server.Store != config.StoreRedis {
		if sa.action == "revoke" {
			return requestFileRevocation(c, cfg.Server.StateDir, sa)
		}
		recs, err := session.ReadFileSessions(cfg.Server.StateDir, time.Now())
		if err != nil {
			return err
		}
		printSessions(c.stdout, recs, sa.user)
		return nil
	}
	rc, err := redisstore.Open(cfg.Redis, slog.New(slog.NewTextHandler(c.stderr, nil)))
	if err != nil {
		return err
	}
	defer rc.Close()
	st := rc.SessionStore().(*redisstore.Store)
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	if sa.action == "revoke" && sa.user != "" {
		n, err := st.DeleteUser(ctx, sa.user)
		if err == nil {
			fmt.Fprintf(c.stderr, "ended %d session(s) of user %q; any other session made before now is refused too\n", n, sa.user)
		}
		return err
	}
	var recs map[string]session.Record
	if sa.user != "" {
		recs, err = st.UserSessions(ctx, sa.user)
	} else {
		recs, err = st.AllSessions(ctx)
	}
	if err != nil {
		return err
	}
	if sa.action == "list" {
		printSessions(c.stdout, recs, "")
		return nil
	}
	return revokeSession(c, ctx, st, recs, sa.id)
}

// requestFileRevocation leaves the revocation for the running service of
// a file store, which ends the sessions at its next poll (two seconds),
// and waits until it has.
func requestFileRevocation(c *cli, dir string, sa sessionArgs) error {
	kind, value := "user", sa.user
	if sa.id != "" {
		recs, err := session.ReadFileSessions(dir, time.Now())
		if err != nil {
			return err
		}
		if len(sa.id) != session.IDLen || !slices.ContainsFunc(slices.Collect(maps.Keys(recs)), func(k string) bool { return strings.HasPrefix(k, sa.id) }) {
			return fmt.Errorf("no session has the id %q", sa.id)
		}
		kind, value = "id", sa.id
	}
	req, err := session.RequestRevocation(dir, kind, value)
	if err != nil {
		return err
	}
	// The file store belongs to the running service: it takes the request
	// at its next file watch (every two seconds) and ends the sessions.
	// Return once it has, so that a session revoked here is refused at its
	// next request.
	for deadline := time.Now().Add(revokeWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(req); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintln(c.stderr, "ended: the running service took the request")
			return nil
		}
	}
	return fmt.Errorf("no running service took the request within %s; it is left in %s, and the service ends the sessions when it starts (is it running, with this state_dir?)", revokeWait, req)
}

// endUserSessions ends every session of user in the store the
// configuration at path keeps its sessions in, as `session revoke -user`
// does: with store = redis the user's generation moves, so every session
// of theirs made before now is refused on every instance at its next
// request, whether or not the user's index names it; with store = file the
// request is left in state_dir for the running service, which takes it at
// its next poll or, when stopped, when it starts. What was done is said on
// standard error.
func endUserSessions(c *cli, path, user string) error {
	cfg := config.Load(path, c.lookupEnv)
	if err := cfg.Report.Err(); err != nil {
		return err
	}
	if cfg.Server.Store != config.StoreRedis {
		if _, err := os.Stat(cfg.Server.StateDir); errors.Is(err, fs.ErrNotExist) {
			return nil // no service has kept a session there yet
		}
		req, err := session.RequestRevocation(cfg.Server.StateDir, "user", user)
		if err != nil {
			return err
		}
		for deadline := time.Now().Add(revokeWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if _, err := os.Stat(req); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintf(c.stderr, "ended the sessions of user %q: the running service took the request\n", user)
				return nil
			}
		}
		fmt.Fprintf(c.stderr, "no running service took the request to end the sessions of user %q within %s; it is left in %s, and the service ends them when it reads it\n", user, revokeWait, req)
		return nil
	}
	rc, err := redisstore.Open(cfg.Redis, slog.New(slog.NewTextHandler(c.stderr, nil)))
	if err != nil {
		return err
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	n, err := rc.SessionStore().(*redisstore.Store).DeleteUser(ctx, user)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "ended %d session(s) of user %q; any other session of theirs made before now is refused too, on every instance\n", n, user)
	return nil
}

// revokeWait bounds how long session revoke waits for the running service
// (file store) to take its request: twice its file watch and some.
const revokeWait = 5 * time.Second

// revokeSession ends the one session whose key starts with id.
func revokeSession(c *cli, ctx context.Context, st *redisstore.Store, recs map[string]session.Record, id string) error {
	if len(id) != session.IDLen {
		return fmt.Errorf("%q is not a session id (see session list)", id)
	}
	var found []string
	for k := range recs {
		if strings.HasPrefix(k, id) {
			found = append(found, k)
		}
	}
	if len(found) != 1 {
		return fmt.Errorf("no session has the id %q", id)
	}
	if err := st.Delete(ctx, found[0]); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "ended session %s of user %q\n", id, recs[found[0]].Username)
	return nil
}

// printSessions writes recs (of user, or all when user is empty), newest
// first, as a table.
func printSessions(w io.Writer, recs map[string]session.Record, user string) {
	keys := make([]string, 0, len(recs))
	for k, r := range recs {
		if user == "" || r.Username == user {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return recs[b].Created.Compare(recs[a].Created) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tTYPE\tCREATED\tLAST SEEN\tCLIENT")
	for _, k := range keys {
		r := recs[k]
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k[:min(session.IDLen, len(k))], r.Username, orDash(r.Type),
			stamp(r.Created, "-"), stamp(r.LastSeen, "-"), orDash(r.Client))
	}
	tw.Flush()
}
