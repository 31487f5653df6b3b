package ini

import "testing"

func TestSuggest(t *testing.T) {
	sections := []string{"server", "backups", "authentication"}
	keys := []string{"users_file", "use_bcrypt", "username", "password", "type"}
	tests := []struct {
		word       string
		candidates []string
		want       string
	}{
		{"Authentication", sections, "authentication"},
		{" authentication ", sections, "authentication"},
		{"authentification", sections, "authentication"},
		{"authenticaton", sections, "authentication"},
		{"auth", sections, "authentication"},
		{"Server", sections, "server"},
		{"backup", sections, "backups"},
		{"logging", sections, ""},
		{"au", sections, ""},
		{"authentication", sections, ""},
		{"use_bycrypt", keys, "use_bcrypt"},
		{"user_file", keys, "users_file"},
		{"usersfile", keys, "users_file"},
		{"passwd", keys, "password"},
		{"typo", keys, "type"},
		{"realm", keys, ""},
	}
	for _, tt := range tests {
		got, ok := Suggest(tt.word, tt.candidates)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Suggest(%q) = %q, %v; want %q", tt.word, got, ok, tt.want)
		}
	}
}
