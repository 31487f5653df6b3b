package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/backupweb/backupweb/internal/atomicfile"
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
	// Generations are the users' generations that are not 0 (see
	// Generations).
	Generations map[string]uint64 `json:"generations,omitempty"`
}

// loadedState is what readStateFile found.
type loadedState struct {
	recs   map[string]Record
	gens   map[string]uint64 // the users' generations
	seq    uint64            // the file's Seq
	exists bool              // the file was there
	loose  bool              // its mode lets group or others in: rewrite it 0600
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
	st.seq, st.gens = sf.Seq, sf.Generations
	for user := range st.gens {
		if user == "" {
			return st, fmt.Errorf("session: session file %s is corrupt (delete it to sign everyone out): a generation has no user name", path)
		}
	}
	for key, rec := range sf.Sessions {
		if key == "" || rec.Username == "" {
			return st, fmt.Errorf("session: session file %s is corrupt (delete it to sign everyone out): a session has no key or no user name", path)
		}
		st.recs[key] = rec
	}
	return st, nil
}

// writeStateFile replaces the file at path with recs, atomically
// (atomicfile.Write, mode 0600): a reader never sees a half-written file,
// and a crash leaves the old file or the new one whole. The temporary
// file's name starts with tempPrefix, which removeStaleTemps knows.
func writeStateFile(path string, recs map[string]Record, gens map[string]uint64, seq uint64) error {
	data, err := json.MarshalIndent(stateFile{Version: fileFormatVersion, Seq: seq, Sessions: recs, Generations: gens}, "", "  ")
	if err != nil {
		return fmt.Errorf("session: encode session file: %w", err)
	}
	if err := atomicfile.Write(path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("session: write session file: %w", err)
	}
	return nil
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
