package login

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DeviceCookie is the name of the device cookie (with the __Host- prefix
// over https, __Secure- with a cookie domain, like the session cookie).
//
// A browser that signs in as a user gets one: a random device id, an
// expiry and an HMAC-SHA256 over both and the user name, under a key
// derived from the secret key (session.Manager.PurposeKey). A login
// attempt for that user name that carries a valid device cookie for it is
// counted against the device (max_user_failures per device) instead of
// against the user name, so that whoever floods a user name with wrong
// passwords from elsewhere blocks the name for everyone but the browsers
// the user has signed in with before (the "device cookies" defence of
// OWASP's guidance on account lockout). A device that fails
// max_user_failures times is blocked on its own. The cookie holds no
// secret and grants nothing: the password is still checked.
const DeviceCookie = "backupweb_device"

// DeviceLifetime is how long a device cookie stays valid after the sign-in
// that issued it; each sign-in issues a fresh one.
const DeviceLifetime = 90 * 24 * time.Hour

// deviceIDLen is the size of a device id in bytes.
const deviceIDLen = 16

// deviceMAC returns the tag of a device cookie for id, expiry and name.
func (p *Provider) deviceMAC(id string, expiry int64, name string) []byte {
	return deviceMACUnder(p.deviceKey, id, expiry, name)
}

// deviceMACUnder is deviceMAC under the key k.
func deviceMACUnder(k []byte, id string, expiry int64, name string) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte("device\x00" + id + "\x00" + strconv.FormatInt(expiry, 10) + "\x00" + name))
	return m.Sum(nil)
}

// issueDevice sets a fresh device cookie for name.
func (p *Provider) issueDevice(w http.ResponseWriter, r *http.Request, name string) {
	raw := make([]byte, deviceIDLen)
	rand.Read(raw)
	id := base64.RawURLEncoding.EncodeToString(raw)
	expiry := p.now().Add(DeviceLifetime).Unix()
	value := id + "." + strconv.FormatInt(expiry, 10) + "." + base64.RawURLEncoding.EncodeToString(p.deviceMAC(id, expiry, p.throttleName(name)))
	p.Manager().SetCookie(w, r, DeviceCookie, value, DeviceLifetime)
}

// device returns the device id of r's device cookie when it is valid for
// name: well formed, unexpired, and signed for that very name.
func (p *Provider) device(r *http.Request, name string) (string, bool) {
	c, err := p.Manager().Cookie(r, DeviceCookie)
	if err != nil {
		return "", false
	}
	id, rest, ok := strings.Cut(c.Value, ".")
	if !ok || len(id) != base64.RawURLEncoding.EncodedLen(deviceIDLen) {
		return "", false
	}
	exp, tag, ok := strings.Cut(rest, ".")
	if !ok {
		return "", false
	}
	expiry, err := strconv.ParseInt(exp, 10, 64)
	if err != nil || !p.now().Before(time.Unix(expiry, 0)) {
		return "", false
	}
	got, err := base64.RawURLEncoding.DecodeString(tag)
	if err != nil {
		return "", false
	}
	if !hmac.Equal(got, p.deviceMAC(id, expiry, name)) && (p.devicePrevKey == nil || !hmac.Equal(got, deviceMACUnder(p.devicePrevKey, id, expiry, name))) {
		return "", false
	}
	return id, true
}
