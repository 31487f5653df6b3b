package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// watchTick is how often the watcher checks that the folder's path still
// names the folder it watches, and passes on the writes it has held back
// (a file growing in place).
const watchTick = time.Second

// The events that change the listing at once: an entry added, removed,
// renamed, its times or mode changed, a file closed after writing.
const listEvents = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO |
	syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE

// The events after which the watch is over: the folder itself removed,
// renamed or unmounted; the kernel then drops the watch (IN_IGNORED).
const endEvents = syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_UNMOUNT | syscall.IN_IGNORED

// startWatcher watches dir with inotify and returns the watcher, running
// in a goroutine of its own until stop or until the folder goes away.
// changed is called after every change of the folder's entries; ended once,
// when the watcher stops for any reason.
func startWatcher(dir string, changed, ended func()) (*watcher, error) {
	before, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("catalog: watch %s: %w", dir, err)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("catalog: watch %s: inotify: %w", dir, err)
	}
	// IN_MODIFY is held back until the next tick: a backup being written
	// sends one per write, and its size need only show within listTTL.
	mask := uint32(listEvents | endEvents | syscall.IN_MODIFY | syscall.IN_ONLYDIR)
	if _, err := syscall.InotifyAddWatch(fd, dir, mask); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("catalog: watch %s: %w", dir, err)
	}
	// The watch holds the folder the path named when it was added; a
	// folder swapped in between the Stat and the watch is caught by the
	// first tick's check.
	f := os.NewFile(uintptr(fd), "inotify "+dir)
	w := &watcher{dir: dir, f: f, dirInfo: before, changed: changed, ended: ended, done: make(chan struct{})}
	go w.run()
	return w, nil
}

// watcher is one inotify watch of the backups folder.
type watcher struct {
	dir     string
	f       *os.File // the inotify descriptor, in Go's poller
	dirInfo os.FileInfo
	changed func()
	ended   func()
	done    chan struct{}
}

// stop ends the watch and waits for its goroutine.
func (w *watcher) stop() {
	w.f.Close()
	<-w.done
}

func (w *watcher) run() {
	defer close(w.done)
	defer w.ended()
	defer w.f.Close()
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	modified := false
	next := time.Now().Add(watchTick)
	for {
		w.f.SetReadDeadline(next)
		n, err := w.f.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			next = time.Now().Add(watchTick)
			if modified {
				modified = false
				w.changed()
			}
			if now, err := os.Stat(w.dir); err != nil || !os.SameFile(now, w.dirInfo) {
				return // the path names another folder, or none
			}
			continue
		}
		if err != nil {
			return
		}
		var mask uint32
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			// struct inotify_event: wd, mask, cookie, len, then the name.
			mask |= binary.NativeEndian.Uint32(buf[off+4:])
			off += syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
		}
		switch {
		case mask&endEvents != 0:
			return
		case mask&(listEvents|syscall.IN_Q_OVERFLOW) != 0:
			modified = false
			w.changed()
		case mask&syscall.IN_MODIFY != 0:
			modified = true
		}
	}
}
