// Package backupweb is the authentication layer of the backupweb service,
// for a Go program that wants the same sign-in in its own net/http
// server: HTTP Basic, a session login with a user file and an optional
// second factor, or sign-in through an OAuth 2.0 / OpenID Connect
// identity provider, configured with the same keys as backupweb's
// configuration file and refused with the same messages when they are
// wrong.
//
// A program builds a Provider from the [authentication] keys, mounts the
// type's own pages, and wraps the routes it wants protected:
//
//	cfg, err := backupweb.ReadConfig("/etc/myapp/auth.ini")
//	if err != nil {
//		log.Fatal(err)
//	}
//	p, err := backupweb.NewProvider("", cfg, backupweb.Options{
//		SecretKey: os.Getenv("BACKUP_SECRET_KEY"),
//		StateDir:  "/var/lib/myapp/sessions",
//	})
//	if err != nil {
//		log.Fatal(err) // every problem, each naming its key
//	}
//	defer p.Close()
//
//	mux := http.NewServeMux()
//	p.Mount(mux) // login, logout, OAuth callback, stylesheet under /_backupweb/
//	mux.Handle("GET /{$}", p.RequireAuth(http.HandlerFunc(home)))
//	http.ListenAndServe("127.0.0.1:8080", p.Handler(mux))
//
//	func home(w http.ResponseWriter, r *http.Request) {
//		u, _ := backupweb.CurrentUser(r)
//		fmt.Fprintf(w, "hello %s\n", u.Username)
//	}
//
// The configuration can also be written in Go, as a map of the keys an
// INI file would hold:
//
//	p, err := backupweb.NewProvider("basic", map[string]string{
//		"username": "admin",
//		"password": "${ADMIN_PASSWORD}",
//	}, backupweb.Options{})
//
// # Types
//
// "none" admits everyone as "anonymous"; it is never a default, and must
// be named. "basic" checks one user name and password (or bcrypt hash)
// with HTTP Basic authentication. "flask-login" serves a login page
// backed by a user file of name:hash lines, with sessions kept in
// Options.StateDir. "oauth" signs users in at Google, GitHub, GitLab or
// any OpenID Connect or OAuth 2.0 provider and admits the e-mail
// addresses or domains the configuration lists. Their keys are those of
// the [authentication] section in docs/configuration.md; flask-login and
// oauth need Options.SecretKey and Options.StateDir.
//
// # Pages
//
// Mount (or Routes, for another router) serves the type's own pages:
// flask-login's login page and /logout, with second_factor its step,
// enrolment, passkeys and password pages under /_backupweb/; oauth's
// /oauth/login, /oauth/callback, /oauth/signed-out and /logout; for every
// type the stylesheet and icon under /_backupweb/. The account page (a
// user's sessions, and flask-login's machine-token forms) comes only with
// Options.AccountPage, and machine tokens are accepted only with
// Options.MachineTokens.
//
// # Errors
//
// A configuration problem is a *ConfigError naming its file, line,
// section and key; ErrNoType, ErrUnknownType, ErrNoSecretKey and
// ErrNoStateDir say the cases a program branches on, and a missing file
// wraps fs.ErrNotExist. A zero or nil Provider refuses every request
// (500) rather than panic; nil handlers are refused at once, naming the
// call.
//
// # From the Flask-era interface
//
// The service this one replaces offered the same layer to Flask
// applications. Its names map to this package like this:
//
//	get_auth_provider(type, config)   NewProvider(typ, config, opts)
//	provider.init_app(app)            (*Provider).Mount(mux)
//	@provider.require_auth            (*Provider).RequireAuth(next)
//	provider.get_current_user()       CurrentUser(r), FromContext(ctx), User.Record()
//
// # What it does not do
//
// The package holds no global state: every Provider is independent, and
// nothing reads the environment but ${NAME} in the configuration (through
// Options.LookupEnv). It does not believe X-Forwarded-For or
// X-Forwarded-Proto: a server behind a TLS proxy gets Secure cookies only
// if the request reaches it over https. It does not apply backupweb's
// [access] rules; a handler reads User.Groups and decides.
package backupweb
