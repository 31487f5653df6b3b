//go:build !linux

package catalog

import (
	"errors"
	"fmt"
)

// startWatcher is not available here: the catalog stats the folders on
// every listing instead.
func startWatcher(dir string, _ func(string), _ func()) (*watcher, error) {
	return nil, fmt.Errorf("catalog: watch %s: %w", dir, errors.ErrUnsupported)
}

// watcher is never made on this system.
type watcher struct{}

func (w *watcher) add(string) error { return errors.ErrUnsupported }

func (w *watcher) stop() {}
