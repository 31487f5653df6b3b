package secretkey

import (
	"bytes"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	a := bytes.Repeat([]byte("a"), MinLen)
	b := bytes.Repeat([]byte("b"), MinLen)
	short := a[:MinLen-1]
	tests := []struct {
		name      string
		cur, prev []byte
		wantErr   string
		wantAll   int
	}{
		{"current alone", a, nil, "", 1},
		{"current and previous", a, b, "", 2},
		{"empty previous is none", a, []byte{}, "", 1},
		{"short current", short, nil, "BACKUP_SECRET_KEY is 31 bytes", 0},
		{"short previous", a, short, "BACKUP_SECRET_KEY_PREVIOUS is 31 bytes", 0},
		{"same twice", a, bytes.Clone(a), "the same as BACKUP_SECRET_KEY", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := New(tt.cur, tt.prev)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New: err %v, want one with %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), string(tt.cur)) {
					t.Fatalf("error %q shows the key", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := len(k.All()); got != tt.wantAll {
				t.Fatalf("All: %d keys, want %d", got, tt.wantAll)
			}
			if !bytes.Equal(k.All()[0], tt.cur) {
				t.Fatal("All does not start with the current key")
			}
		})
	}
}

func TestDerive(t *testing.T) {
	a := bytes.Repeat([]byte("a"), MinLen)
	b := bytes.Repeat([]byte("b"), MinLen)
	both, err := New(a, b)
	if err != nil {
		t.Fatal(err)
	}
	d, err := both.Derive("label one")
	if err != nil {
		t.Fatal(err)
	}
	alone, _ := Keys{Current: a}.Derive("label one")
	prevAlone, _ := Keys{Current: b}.Derive("label one")
	other, _ := Keys{Current: a}.Derive("label two")
	switch {
	case len(d) != 2 || len(d[0]) != 32:
		t.Fatalf("Derive: %d keys", len(d))
	case !bytes.Equal(d[0], alone[0]):
		t.Fatal("the current key's derivation depends on the previous key")
	case !bytes.Equal(d[1], prevAlone[0]):
		t.Fatal("the previous key's derivation differs from its own")
	case bytes.Equal(d[0], d[1]), bytes.Equal(d[0], other[0]):
		t.Fatal("two keys or two labels derive the same key")
	}
}
