package oidctest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestStartServesDiscovery(t *testing.T) {
	p := Start(t, Options{Clients: []Client{{ID: "c", Secret: "s", RedirectURIs: []string{"http://127.0.0.1:9/cb"}}}})
	resp, err := http.Get(p.Issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := [][2]any{
		{doc["issuer"], p.Issuer},
		{doc["authorization_endpoint"], p.AuthorizationEndpoint()},
		{doc["token_endpoint"], p.TokenEndpoint()},
		{doc["userinfo_endpoint"], p.UserinfoEndpoint()},
	}
	for _, w := range want {
		if w[0] != w[1] {
			t.Errorf("discovery says %q, the provider %q", w[0], w[1])
		}
	}
}

func TestSubmitLoginNeedsTheLoginPage(t *testing.T) {
	p := Start(t, Options{})
	page := httptest.NewRecorder().Result()
	page.Request = httptest.NewRequest(http.MethodGet, "http://elsewhere.example/login/username?authRequestID=x", nil)
	if _, err := p.SubmitLogin(http.DefaultClient, page, "u", "p"); err == nil {
		t.Error("SubmitLogin accepted a page that is not the provider's")
	}
}
