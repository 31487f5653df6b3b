package login

// Files returns the files the provider uses, each by the [authentication]
// key that names it, defaults applied: what check-config -as-service
// checks the service user can use. The factors file is named only when a
// second factor is on; a key with no file is left out.
func (cfg Config) Files() map[string]string {
	c := cfg.WithDefaults()
	files := map[string]string{"users_file": c.UsersFile, "login_template": c.LoginTemplate, "tokens_file": c.TokensFile}
	if c.SecondFactor != SecondFactorOff {
		files["factors_file"] = c.FactorsFile
	}
	for k, v := range files {
		if v == "" {
			delete(files, k)
		}
	}
	return files
}
