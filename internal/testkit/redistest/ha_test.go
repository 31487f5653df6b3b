package redistest

import "testing"

// TestSlot: CRC16's check value, a slot Redis's documentation gives, and
// hash tags.
func TestSlot(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want int
	}{
		{"123456789", 0x31C3}, // CRC16-XMODEM's check value
		{"foo", 12182},
		{"{user1000}.following", Slot("user1000")},
		{"a:{user1000}:b", Slot("user1000")},
		{"{}user1000", Slot("{}user1000")},
	} {
		if got := Slot(tc.key); got != tc.want {
			t.Errorf("Slot(%q) = %d, want %d", tc.key, got, tc.want)
		}
	}
	if Slot("{}user1000") == Slot("user1000") {
		t.Error("an empty hash tag was taken for one")
	}
}
