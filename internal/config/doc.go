// Package config reads the program's configuration file into a typed
// Config, once, at start-up and on each reload: the [server], [backups],
// [proxy], [redis], [ui] and [access] sections, the mode they select
// (catalog, proxy or forward authentication) and the public URL. Every
// problem is recorded in one ini.Report at its file, line and key, so that
// check-config refuses exactly what serve refuses. The [authentication]
// section is handed on as read (Config.Auth) to the table of types in
// internal/app, which alone knows each type's keys.
//
// It reads files and the environment, never the network, and opens
// nothing that must be closed.
package config
