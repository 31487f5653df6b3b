package metrics_test

import "github.com/backupweb/backupweb/internal/buildinfo"

func runtimeVersion() string { return buildinfo.Get().GoVersion }
func revision() string       { return buildinfo.Get().ShortRevision() }
func version() string        { return buildinfo.Get().Version }
