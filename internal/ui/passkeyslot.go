package ui

import (
	"bytes"
	"html/template"
)

// PasskeySlot is the data of the passkey part of the second-factor and
// enrolment pages: a "Use a passkey" button (Register false) that
// completes the sign-in, or (Register true) a form that registers a
// passkey as the user's first second factor and then shows the recovery
// codes the answer carries. The script takes the CSRF token from the
// page's own form (its csrf_token field).
type PasskeySlot struct {
	// BeginURL and FinishURL are where the ceremony begins and finishes.
	BeginURL, FinishURL string
	// Next is where the browser goes after.
	Next string
	// Register selects the registration form rather than the button.
	Register bool
}

var slotTemplate = template.Must(template.New("slot").Funcs(template.FuncMap{"static": staticURL}).Parse(`
{{- /* Loaded here, in the body: the page's policy allows it. */ -}}
<script src="{{static "passkey.js"}}" defer></script>
<p class="alert" role="alert" id="passkey-error" hidden></p>
{{- if .Register}}
<form class="stack" id="passkey-add" data-passkey="register" hidden data-begin="{{.BeginURL}}" data-finish="{{.FinishURL}}" data-next="{{.Next}}">
<label for="passkey-name">Or use a passkey: give it a name</label>
<input id="passkey-name" name="name" type="text" maxlength="64" placeholder="Laptop, phone, security key" autocomplete="off" required>
<button type="submit" class="secondary">Use a passkey instead</button>
</form>
<div id="passkey-enrolled" hidden>
<p class="notice" role="status">Your passkey is set up.</p>
<p>These are your recovery codes. Each one signs you in once if you lose your passkey. Keep them somewhere safe: they are shown only now.</p>
<ul class="codes" id="passkey-recovery"></ul>
<a class="button" href="{{.Next}}" id="passkey-continue">Continue</a>
</div>
{{- else}}
<button type="button" class="secondary" id="passkey-sign-in" data-passkey="sign-in" data-begin="{{.BeginURL}}" data-finish="{{.FinishURL}}" data-next="{{.Next}}" hidden>Use a passkey</button>
<p class="or">or</p>
{{- end}}
`))

// PasskeySlotHTML renders s as the trusted markup the pages' Passkey
// field takes. A page that shows it must be served with ScriptPolicy.
func PasskeySlotHTML(s PasskeySlot) template.HTML {
	var b bytes.Buffer
	if err := slotTemplate.Execute(&b, s); err != nil {
		return ""
	}
	return template.HTML(b.String())
}
