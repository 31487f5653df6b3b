package main

import (
	"github.com/backupweb/backupweb/internal/testkit/redistest"
	"github.com/backupweb/backupweb/internal/testkit/toolstest"
)

// startRedis starts redis-server on a free loopback port, in a folder of
// its own under dir, without persistence (see redistest.Launch). When
// redis-server is not installed it returns a reason to skip, or an error
// under BACKUPWEB_REQUIRE_TOOLS=1.
func startRedis(dir string) (rs *redistest.Server, skip string, err error) {
	bin, skip, err := toolstest.Find("redis-server", "redis-server")
	if err != nil || skip != "" {
		if skip != "" {
			skip += "; set BACKUPWEB_REQUIRE_TOOLS=1 to make this a failure"
		}
		return nil, skip, err
	}
	rs, err = redistest.Launch(bin, dir)
	return rs, "", err
}
