package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// FileName is the name of the file store's file inside its directory.
const FileName = "sessions.json"

// fileFormatVersion is the "version" written into the file. A file with any
// other version is refused rather than misread.
const fileFormatVersion = 1

// tempPrefix starts the names of the temporary files a rewrite goes through.
// Leftovers from a crash are removed when the store opens.
const tempPrefix = "." + FileName + ".tmp-"

// stateFile is the file's JSON shape:
//
//	{"version": 1, "sessions": {"<store key>": {"username": ..., "attrs": {...},
//	  "created": ..., "last_seen": ..., "csrf": "<base64>", "expires": ...}}}
type stateFile struct {
	Version int `json:"version"`
	// Seq is the last change the file includes; journal entries up to it
	// are already in it (see JournalName). Absent in older files: 0.
	Seq      uint64            `json:"seq,omitempty"`
	Sessions map[string]Record `json:"sessions"`
}

// loadedState is what readStateFile found.
type loadedState struct {
	recs   map[string]Record
	seq    uint64 // the file's Seq
	exists bool   // the file was there
	loose  bool   // its mode lets group or others in: rewrite it 0600
}

// readStateFile reads and checks the file at path. A missing file is an
// empty store; anything unreadable or malformed is an error naming the file,
// so that a damaged file stops the program instead of silently signing
// everyone out or, worse, being half understood.
func readStateFile(path string) (loadedState, error) {
	st := loadedState{recs: make(map[string]Record)}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("session: read session file: %w", err)
	}
	st.exists = true
	if info, err := os.Stat(path); err == nil && info.Mode().Perm()&0o077 != 0 {
		st.loose = true
	}
	var sf stateFile
	if err := json.Unmarshal(data, &sf); err != nil {
		return st, fmt.Errorf("session: session file %s is corrupt (delete it to sign everyone out): %w", path, err)
	}
	if sf.Version != fileFormatVersion {
		return st, fmt.Errorf("session: session file %s has unsupported format version %d (want %d)", path, sf.Version, fileFormatVersion)
	}
	st.seq = sf.Seq
	for key, rec := range sf.Sessions {
		if key == "" || rec.Username == "" {
			return st, fmt.Errorf("session: session file %s is corrupt (delete it to sign everyone out): a session has no key or no user name", path)
		}
		st.recs[key] = rec
	}
	return st, nil
}

// writeStateFile replaces the file at path with recs, atomically: the data
// goes to a temporary file in the same directory (created 0600), which is
// synced, then renamed over the old file, and the directory is synced so the
// rename itself survives a crash. A reader never sees a half-written file.
func writeStateFile(path string, recs map[string]Record, seq uint64) (err error) {
	data, err := json.MarshalIndent(stateFile{Version: fileFormatVersion, Seq: seq, Sessions: recs}, "", "  ")
	if err != nil {
		return fmt.Errorf("session: encode session file: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return fmt.Errorf("session: write session file: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("session: write session file: %w", err)
	}
	if err = f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("session: write session file: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("session: write session file: %w", err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("session: write session file: %w", err)
	}
	if err = syncDir(dir); err != nil {
		return fmt.Errorf("session: write session file: %w", err)
	}
	return nil
}

// syncDir flushes a directory entry change (the rename) to disk. Windows
// cannot open a directory for syncing and makes renames durable itself.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// removeStaleTemps deletes temporary files left by a rewrite that a crash
// interrupted. Only names this package creates are touched.
func removeStaleTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("session: read state directory: %w", err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix) && e.Type().IsRegular() {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("session: remove stale temporary file: %w", err)
			}
		}
	}
	return nil
}
