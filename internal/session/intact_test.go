package session

import (
	"bytes"
	"testing"
	"time"
)

// TestTableIntactMarks: a record's MAC is taken as checked only while the
// record is the very one marked; putting or touching it, a mark made with
// another slice, and removing it all leave it to be checked again.
func TestTableIntactMarks(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	rec := Record{Data: Data{Username: "alice"}, Expires: now.Add(time.Hour), MAC: []byte("mac-1")}
	checked := func(tb *table) bool {
		_, ok, c := tb.findShared("k", now)
		if !ok {
			t.Fatal("record not found")
		}
		return c
	}
	tb := newTable()
	tb.put("k", rec)
	if checked(&tb) {
		t.Fatal("a new record is taken as checked")
	}
	found, _, _ := tb.findShared("k", now)
	tb.markIntact("k", bytes.Clone(found.MAC)) // equal bytes, another slice
	if checked(&tb) {
		t.Fatal("a mark made with another slice counts")
	}
	tb.markIntact("k", found.MAC)
	if !checked(&tb) {
		t.Fatal("the marked record is not taken as checked")
	}
	tb.touch("k", now, now.Add(time.Hour), []byte("mac-2"))
	if checked(&tb) {
		t.Fatal("a touched record keeps its mark")
	}
	found, _, _ = tb.findShared("k", now)
	tb.markIntact("k", found.MAC)
	tb.put("k", Record{Data: Data{Username: "mallory"}, Expires: now.Add(time.Hour), MAC: found.MAC})
	if checked(&tb) {
		t.Fatal("a record put again, even with the same MAC bytes, keeps its mark")
	}
	found, _, _ = tb.findShared("k", now)
	tb.markIntact("k", found.MAC)
	tb.remove("k")
	tb.put("k", rec)
	if checked(&tb) || len(tb.intact) != 0 {
		t.Fatalf("a removed record's mark outlives it: %d marks", len(tb.intact))
	}
}
