package secondfactor_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// softKey is a software authenticator for HTTP tests: it answers a
// registration's options as a browser with a security key would, with a
// new ES256 credential and "none" attestation, for the origin given.
// (The Chromium tests use the browser's virtual authenticator instead.)
type softKey struct {
	priv *ecdsa.PrivateKey
	id   []byte
}

func newSoftKey(t testing.TB) *softKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id := make([]byte, 16)
	rand.Read(id)
	return &softKey{priv: priv, id: id}
}

// create answers the registration options (begunAnswer.Options) at
// origin: the credential JSON the page's script would post.
func (k *softKey) create(t testing.TB, options json.RawMessage, origin string) json.RawMessage {
	t.Helper()
	var opts struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
			RP        struct {
				ID string `json:"id"`
			} `json:"rp"`
		} `json:"publicKey"`
	}
	if err := json.Unmarshal(options, &opts); err != nil || opts.PublicKey.Challenge == "" {
		t.Fatalf("registration options %s: %v", options, err)
	}
	clientData, _ := json.Marshal(map[string]string{"type": "webauthn.create", "challenge": opts.PublicKey.Challenge, "origin": origin})
	pub, err := k.priv.PublicKey.ECDH()
	if err != nil {
		t.Fatal(err)
	}
	raw := pub.Bytes() // 0x04 | X | Y
	coseKey, err := cbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: raw[1:33], -3: raw[33:65]})
	if err != nil {
		t.Fatal(err)
	}
	rpHash := sha256.Sum256([]byte(opts.PublicKey.RP.ID))
	authData := append(rpHash[:], 0x45) // user present, user verified, credential data
	authData = binary.BigEndian.AppendUint32(authData, 0)
	authData = append(authData, make([]byte, 16)...) // AAGUID
	authData = binary.BigEndian.AppendUint16(authData, uint16(len(k.id)))
	authData = append(authData, k.id...)
	authData = append(authData, coseKey...)
	att, err := cbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": authData})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	body, _ := json.Marshal(map[string]any{
		"id": enc(k.id), "rawId": enc(k.id), "type": "public-key",
		"response": map[string]string{"clientDataJSON": enc(clientData), "attestationObject": enc(att)},
	})
	return body
}
