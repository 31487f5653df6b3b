// Package ldaptest runs a real OpenLDAP slapd for tests: unprivileged,
// on free loopback ports (ldap:// with StartTLS, and ldaps://), with a
// configuration and a test CA generated in a temporary folder and a
// directory loaded with slapadd from LDIF before it starts. It is stopped
// with its process group when the test ends. A test is skipped when slapd
// is not installed (Debian package slapd), and fails instead under
// BACKUPWEB_REQUIRE_TOOLS=1. Nothing of the system's slapd instance
// (/etc/ldap/slapd.d, /var/lib/ldap) is read or needed.
//
// The directory it serves (Seed) has people under ou=people and
// groupOfNames groups under ou=groups of dc=example,dc=org, one of them
// inside another.
package ldaptest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/backupweb/backupweb/internal/testkit"
	"github.com/backupweb/backupweb/internal/testkit/certtest"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// Names of the seeded directory.
const (
	// Base is the suffix the server holds.
	Base = "dc=example,dc=org"
	// AdminDN and AdminPassword are the root account (rootdn).
	AdminDN       = "cn=admin," + Base
	AdminPassword = "admin-secret"
	// ServiceDN and ServicePassword are the service account that
	// searches.
	ServiceDN       = "cn=backupweb,ou=services," + Base
	ServicePassword = "service-secret"
)

// Seed is the LDIF a server starts with, besides the base and the
// service account: users alice (groups backup-readers, and staff through
// it), bob (staff), and two entries named twin (a name two users share);
// groups staff, which holds the group backup-readers, and admins (empty
// but for the admin).
const Seed = `dn: ou=people,` + Base + `
objectClass: organizationalUnit
ou: people

dn: ou=groups,` + Base + `
objectClass: organizationalUnit
ou: groups

dn: uid=alice,ou=people,` + Base + `
objectClass: inetOrgPerson
uid: alice
cn: Alice
sn: Liddell
mail: alice@example.org
userPassword: alice-password

dn: uid=bob,ou=people,` + Base + `
objectClass: inetOrgPerson
uid: bob
cn: Bob
sn: Builder
mail: bob@example.org
userPassword: bob-password

dn: cn=twin one,ou=people,` + Base + `
objectClass: inetOrgPerson
uid: twin
cn: twin one
sn: One
userPassword: twin-password

dn: cn=twin two,ou=people,` + Base + `
objectClass: inetOrgPerson
uid: twin
cn: twin two
sn: Two
userPassword: twin-password

dn: cn=backup-readers,ou=groups,` + Base + `
objectClass: groupOfNames
cn: backup-readers
member: uid=alice,ou=people,` + Base + `

dn: cn=staff,ou=groups,` + Base + `
objectClass: groupOfNames
cn: staff
member: uid=bob,ou=people,` + Base + `
member: cn=backup-readers,ou=groups,` + Base + `

dn: cn=admins,ou=groups,` + Base + `
objectClass: groupOfNames
cn: admins
member: ` + AdminDN + `
`

// Passwords are the seeded users' passwords.
var Passwords = map[string]string{"alice": "alice-password", "bob": "bob-password", "twin": "twin-password"}

// Server is a running slapd.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	conf string
	cmd  *exec.Cmd
	// Addr and TLSAddr are the host:port of ldap:// (StartTLS offered)
	// and ldaps://.
	Addr, TLSAddr string
	// CAFile is the PEM of the test CA that signed the server's
	// certificate, for localhost and 127.0.0.1.
	CAFile string
}

// Start runs a server for the rest of the test, its directory loaded with
// the base, the service account, Seed and extra (more LDIF, may be "").
func Start(t testing.TB, extra string) *Server {
	t.Helper()
	bin := find(t, "slapd")
	slapadd := find(t, "slapadd")
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	s.Addr, s.TLSAddr = testkit.FreeAddr(t), testkit.FreeAddr(t)
	s.CAFile = certtest.WriteLocalhost(t, s.dir)
	s.must(os.Mkdir(filepath.Join(s.dir, "db"), 0o700))
	s.conf = filepath.Join(s.dir, "slapd.conf")
	s.must(os.WriteFile(s.conf, []byte(s.config()), 0o600))
	ldif := filepath.Join(s.dir, "seed.ldif")
	s.must(os.WriteFile(ldif, []byte(base()+"\n"+Seed+"\n"+extra), 0o600))
	if out, err := exec.Command(slapadd, "-f", s.conf, "-l", ldif).CombinedOutput(); err != nil {
		t.Fatalf("slapadd: %v\n%s", err, out)
	}
	s.Start()
	return s
}

// find returns the path of a program of Debian's slapd package, which
// puts them in /usr/sbin (not on every PATH).
func find(t testing.TB, name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return toolstest.Need(t, "/usr/sbin/"+name, "slapd")
}

// base is the LDIF of the suffix and the service account.
func base() string {
	return `dn: ` + Base + `
objectClass: dcObject
objectClass: organization
dc: example
o: Example

dn: ou=services,` + Base + `
objectClass: organizationalUnit
ou: services

dn: ` + ServiceDN + `
objectClass: applicationProcess
objectClass: simpleSecurityObject
cn: backupweb
userPassword: ` + ServicePassword + `
`
}

// config is slapd.conf: the schemas people and groups need, the mdb
// backend from Debian's module folder, the password policy overlay (for
// its account lock, pwdAccountLockedTime; no policy is set), TLS with the test certificate,
// and access: passwords for binding only, the rest readable by bound
// users (anonymous users read nothing).
func (s *Server) config() string {
	d := s.dir
	return `include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
moduleload ppolicy
pidfile ` + filepath.Join(d, "slapd.pid") + `
argsfile ` + filepath.Join(d, "slapd.args") + `
TLSCACertificateFile ` + s.CAFile + `
TLSCertificateFile ` + filepath.Join(d, "server.pem") + `
TLSCertificateKeyFile ` + filepath.Join(d, "server.key") + `
database mdb
maxsize 16777216
suffix "` + Base + `"
rootdn "` + AdminDN + `"
rootpw ` + AdminPassword + `
directory ` + filepath.Join(d, "db") + `
overlay ppolicy
access to attrs=userPassword
	by self write
	by anonymous auth
	by * none
access to *
	by users read
	by * none
`
}

// Start starts the server (again, after Kill) on the same addresses and
// data, and waits until both listeners accept connections.
func (s *Server) Start() {
	s.t.Helper()
	urls := "ldap://" + s.Addr + "/ ldaps://" + s.TLSAddr + "/"
	// -d 0: stay in the foreground (no fork), log nothing.
	s.cmd = exec.Command(s.bin, "-f", s.conf, "-h", urls, "-d", "0")
	testkit.StartServer(s.t, s.cmd, s.Addr, 10*time.Second, nil)
	testkit.WaitListening(s.t, s.TLSAddr, 10*time.Second, func() string { return "slapd's ldaps listener" })
}

// URL is the ldap:// URL (use it with StartTLS).
func (s *Server) URL() string { return "ldap://" + s.Addr }

// TLSURL is the ldaps:// URL. Its host is localhost, the name the test
// certificate is for.
func (s *Server) TLSURL() string {
	_, port, _ := net.SplitHostPort(s.TLSAddr)
	return "ldaps://localhost:" + port
}

// StartTLSURL is the ldap:// URL under the name the certificate is for.
func (s *Server) StartTLSURL() string {
	_, port, _ := net.SplitHostPort(s.Addr)
	return "ldap://localhost:" + port
}

// Pause stops the server's process (SIGSTOP): it keeps its connections
// and listeners but answers nothing, as a hung directory does. It returns
// once every thread of it is stopped (a thread busy on another CPU stops
// a moment after the signal is sent), as /proc tells.
func (s *Server) Pause() {
	s.t.Helper()
	s.signal(syscall.SIGSTOP)
	tasks := fmt.Sprintf("/proc/%d/task", s.cmd.Process.Pid)
	if _, err := os.Stat(tasks); err != nil {
		return // no /proc to ask
	}
	testkit.WaitUntil(s.t, 5*time.Second, func() bool {
		stats, _ := filepath.Glob(filepath.Join(tasks, "*", "stat"))
		for _, f := range stats {
			b, err := os.ReadFile(f)
			if err != nil {
				continue // a thread that ended
			}
			// pid (comm) STATE ...: comm may hold spaces, so the state
			// follows the last ")".
			if i := strings.LastIndexByte(string(b), ')'); i < 0 || i+2 >= len(b) || b[i+2] != 'T' && b[i+2] != 't' {
				return false
			}
		}
		return len(stats) > 0
	}, func() string { return "slapd's threads did not all stop after SIGSTOP" })
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

// Kill kills the server (SIGKILL) and waits for it to be gone: its
// connections are reset and its ports refuse.
func (s *Server) Kill() {
	s.signal(syscall.SIGKILL)
	s.cmd.Wait()
}

func (s *Server) signal(sig syscall.Signal) {
	s.t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.t.Fatalf("slapd: %v: %v", sig, err)
	}
}

// Modify applies LDIF changes (changetype records) as the admin, with
// ldapmodify from ldap-utils.
func (s *Server) Modify(ldif string) {
	s.t.Helper()
	s.tool("ldapmodify", ldif)
}

// Lock locks the account of dn for good as the admin, as an
// administrator disables an OpenLDAP account: pwdAccountLockedTime =
// 000001010000Z (the password policy overlay); binds as dn then fail.
func (s *Server) Lock(dn string) {
	s.t.Helper()
	s.Modify("dn: " + dn + "\nchangetype: modify\nadd: pwdAccountLockedTime\npwdAccountLockedTime: 000001010000Z\n")
}

// SetPassword sets the password of dn as the admin, with ldappasswd from
// ldap-utils (the Password Modify extended operation, RFC 3062).
func (s *Server) SetPassword(dn, password string) {
	s.t.Helper()
	s.tool("ldappasswd", "", "-s", password, dn)
}

// tool runs an ldap-utils program as the admin over StartTLS, with stdin.
func (s *Server) tool(name, stdin string, args ...string) {
	s.t.Helper()
	bin := toolstest.Need(s.t, name, "ldap-utils")
	// By address: libldap compares "localhost" with the machine's own
	// name, not with the certificate's.
	all := append([]string{"-H", s.URL(), "-ZZ", "-x", "-D", AdminDN, "-w", AdminPassword}, args...)
	cmd := exec.Command(bin, all...)
	cmd.Env = append(os.Environ(), "LDAPTLS_CACERT="+s.CAFile, "LDAPTLS_REQCERT=demand")
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("%s: %v\n%s", name, err, out)
	}
}

func (s *Server) must(err error) {
	if err != nil {
		s.t.Helper()
		s.t.Fatal(err)
	}
}
