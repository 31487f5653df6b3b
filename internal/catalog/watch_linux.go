package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

// watchTick is how often the watcher checks that the folder's path still
// names the folder it watches, and passes on the writes it has held back
// (a file growing in place).
const watchTick = time.Second

// The events that change a folder's listing at once: an entry added,
// removed, renamed, its times or mode changed, a file closed after
// writing.
const listEvents = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO |
	syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE

// The events after which a folder's watch is over: the folder itself
// removed, renamed or unmounted; the kernel then drops the watch
// (IN_IGNORED). For the top folder, the whole watch ends.
const endEvents = syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF | syscall.IN_UNMOUNT | syscall.IN_IGNORED

// watchMask is what every folder is watched for. IN_MODIFY is held back
// until the next tick: a backup being written sends one per write, and its
// size need only show within listTTL.
const watchMask = uint32(listEvents | endEvents | syscall.IN_MODIFY | syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW)

// startWatcher watches dir with inotify and returns the watcher, running
// in a goroutine of its own until stop or until the folder goes away.
// Folders below dir are added with add. changed is called with a folder's
// path inside dir ("" for dir, "db/" …; allDirty for all) after every
// change of its entries; ended once, when the watcher stops for any
// reason.
func startWatcher(dir string, changed func(string), ended func()) (*watcher, error) {
	before, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("catalog: watch %s: %w", dir, err)
	}
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("catalog: watch %s: inotify: %w", dir, err)
	}
	// The top folder is watched through its path as given, which may be
	// a link to a mounted disk; IN_DONT_FOLLOW is for the folders below.
	wd, err := syscall.InotifyAddWatch(fd, dir, watchMask&^syscall.IN_DONT_FOLLOW)
	if err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("catalog: watch %s: %w", dir, err)
	}
	// The watch holds the folder the path named when it was added; a
	// folder swapped in between the Stat and the watch is caught by the
	// first tick's check.
	f := os.NewFile(uintptr(fd), "inotify "+dir)
	w := &watcher{dir: dir, fd: fd, f: f, top: int32(wd), dirInfo: before, changed: changed, ended: ended,
		paths: map[int32]string{int32(wd): ""}, done: make(chan struct{})}
	go w.run()
	return w, nil
}

// watcher is one inotify descriptor watching the backups folder and every
// folder below it.
type watcher struct {
	dir     string
	fd      int
	f       *os.File // the inotify descriptor, in Go's poller
	top     int32    // the top folder's watch
	dirInfo os.FileInfo
	changed func(string)
	ended   func()
	done    chan struct{}

	mu    sync.Mutex
	paths map[int32]string // watch descriptor → folder path inside dir
}

// add watches the folder rel ("db/") below the top folder; "" is watched
// already.
func (w *watcher) add(rel string) error {
	if rel == "" {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paths == nil {
		return errors.New("catalog: watch stopped")
	}
	wd, err := syscall.InotifyAddWatch(w.fd, w.dir+"/"+rel, watchMask)
	if err != nil {
		return fmt.Errorf("catalog: watch %s%s: %w", w.dir, rel, err)
	}
	w.paths[int32(wd)] = rel
	return nil
}

// stop ends the watch and waits for its goroutine.
func (w *watcher) stop() {
	w.f.Close()
	<-w.done
}

func (w *watcher) run() {
	defer close(w.done)
	defer w.ended()
	defer func() {
		w.mu.Lock()
		w.paths = nil
		w.mu.Unlock()
		w.f.Close()
	}()
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	modified := map[string]bool{}
	next := time.Now().Add(watchTick)
	for {
		w.f.SetReadDeadline(next)
		n, err := w.f.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			next = time.Now().Add(watchTick)
			for rel := range modified {
				w.changed(rel)
			}
			clear(modified)
			if now, err := os.Stat(w.dir); err != nil || !os.SameFile(now, w.dirInfo) {
				return // the path names another folder, or none
			}
			continue
		}
		if err != nil {
			return
		}
		if !w.events(buf[:n], modified) {
			return
		}
	}
}

// events handles one read's events and reports whether the watch goes on.
func (w *watcher) events(buf []byte, modified map[string]bool) bool {
	for off := 0; off+syscall.SizeofInotifyEvent <= len(buf); {
		// struct inotify_event: wd, mask, cookie, len, then the name.
		wd := int32(binary.NativeEndian.Uint32(buf[off:]))
		mask := binary.NativeEndian.Uint32(buf[off+4:])
		off += syscall.SizeofInotifyEvent + int(binary.NativeEndian.Uint32(buf[off+12:]))
		if mask&syscall.IN_Q_OVERFLOW != 0 {
			w.changed(allDirty)
			continue
		}
		w.mu.Lock()
		rel, ok := w.paths[wd]
		if ok && mask&syscall.IN_IGNORED != 0 {
			delete(w.paths, wd)
		}
		w.mu.Unlock()
		switch {
		case !ok:
		case wd == w.top && mask&endEvents != 0:
			return false
		case mask&endEvents != 0:
			// A folder below the top gone or moved: its parent hears
			// of it too and reads its entries again; so does the folder,
			// in case another is made at its path.
			w.changed(rel)
		case mask&listEvents != 0:
			delete(modified, rel)
			w.changed(rel)
		case mask&syscall.IN_MODIFY != 0:
			modified[rel] = true
		}
	}
	return true
}
