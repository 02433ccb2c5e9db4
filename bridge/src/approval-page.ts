/**
 * The approval page, served by the bridge itself: the only place where the signer types the token's PIN. It is
 * self-contained (inline CSS, no script, no external resource) and may not be framed, so the service's page can
 * neither read nor fill it.
 */
import type { SignRequest } from './requests.ts';
import type { PinState } from './tokens.ts';

export const APPROVAL_CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'";

export interface ApprovalView {
  request: SignRequest;
  /** The token's PIN counter flags, when the token could be read. */
  pin: PinState | null;
  /** Why the page is shown again (wrong PIN, empty PIN). */
  notice?: string;
}

const STYLE = `
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f3f4f6; color: #111827; }
main { max-width: 40rem; margin: 2rem auto; background: #fff; padding: 1.5rem 2rem; border-radius: 8px; box-shadow: 0 1px 4px rgb(0 0 0 / 0.15); }
h1 { font-size: 1.4rem; margin-top: 0; }
.description { white-space: pre-wrap; font-size: 1.1rem; padding: 0.75rem 1rem; background: #eef2ff; border-left: 4px solid #3730a3; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
code { font-size: 0.85rem; }
.alert { padding: 0.75rem 1rem; background: #fef2f2; border: 1px solid #b91c1c; color: #7f1d1d; border-radius: 4px; }
.warning { padding: 0.75rem 1rem; background: #fffbeb; border: 1px solid #92400e; color: #78350f; border-radius: 4px; }
label { display: block; font-weight: 600; margin-top: 1rem; }
input[type=password] { font-size: 1.1rem; padding: 0.4rem; width: 14rem; }
.buttons { margin-top: 1rem; display: flex; gap: 1rem; }
button { font-size: 1rem; padding: 0.5rem 1.5rem; border-radius: 4px; border: 1px solid #374151; background: #fff; cursor: pointer; }
button[value=sign] { background: #1e3a8a; border-color: #1e3a8a; color: #fff; }
.note { color: #4b5563; font-size: 0.9rem; }
`;

export function renderApprovalPage(view: ApprovalView): string {
  const { request } = view;
  const cert = request.certificate.x509;
  const notes: string[] = [];
  if (view.notice) notes.push(`<p class="alert" role="alert">${escapeHtml(view.notice)}</p>`);
  const pinWarning = view.pin ? pinWarningText(view.pin) : '';
  if (pinWarning) notes.push(`<p class="warning">${escapeHtml(pinWarning)}</p>`);
  const now = Date.now();
  if (now < cert.validFromDate.getTime() || now > cert.validToDate.getTime()) {
    notes.push('<p class="warning">This certificate is not valid today: a signature made with it may be rejected.</p>');
  }
  const body = `
<h1>Sign with your DSC token</h1>
<p><strong>${escapeHtml(request.origin)}</strong> asks you to sign:</p>
<p class="description">${escapeHtml(request.description)}</p>
<dl>
  <dt>Certificate of</dt><dd>${escapeHtml(commonName(cert.subject) ?? formatName(cert.subject))}</dd>
  <dt>Issued by</dt><dd>${escapeHtml(formatName(cert.issuer))}</dd>
  <dt>Valid</dt><dd>${formatDate(cert.validFromDate)} to ${formatDate(cert.validToDate)}</dd>
  <dt>Token</dt><dd>${escapeHtml(request.certificate.tokenLabel)}</dd>
  <dt>Digest (SHA-256)</dt><dd><code>${groupHex(request.digest.toString('hex'))}</code></dd>
</dl>
${notes.join('\n')}
<form method="post" action="/approve/${escapeHtml(request.id)}">
  <input type="hidden" name="key" value="${escapeHtml(request.key)}">
  <label for="pin">Token PIN</label>
  <input id="pin" name="pin" type="password" autocomplete="off" required autofocus maxlength="64">
  <div class="buttons">
    <button type="submit" name="action" value="sign">Sign</button>
    <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
  </div>
</form>
<p class="note">The PIN goes only to your token, through this program on your computer: the website never sees it.
This request expires at ${formatDate(new Date(request.expiresAt))}.</p>`;
  return page('Approve the signature', body);
}

/** The page shown once the request is over (or could not be opened). */
export function renderOutcomePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}

/** Plain words for the end of a request, for the signer rather than for the service. */
export function outcomeText(request: SignRequest): { title: string; message: string } {
  const back = 'You can close this tab and go back to the signing page.';
  if (request.status === 'signed') return { title: 'Signed', message: `Your token signed the document. ${back}` };
  if (request.status === 'expired') {
    return { title: 'Request expired', message: `Nothing was signed: the request was not approved within 5 minutes. ${back}` };
  }
  const messages: Record<string, string> = {
    cancelled: 'You cancelled. Nothing was signed.',
    pin_locked:
      "Nothing was signed: your token is locked after too many wrong PINs. Unlock it with your token vendor's tool (it needs the admin/SO PIN) or ask your certifying authority.",
    token_removed: 'Nothing was signed: the token was removed. Plug it in again and start again from the signing page.',
    key_not_found: 'Nothing was signed: the token holds no private key for this certificate.',
  };
  const code = request.error?.code ?? '';
  return { title: 'Not signed', message: `${messages[code] ?? request.error?.message ?? 'Nothing was signed.'} ${back}` };
}

export function wrongPinNotice(pin: PinState): string {
  if (pin.finalTry) return `Wrong PIN. Nothing was signed. ${FINAL_TRY}`;
  return 'Wrong PIN. Nothing was signed. Too many wrong PINs lock the token: check the PIN before you try again.';
}

const FINAL_TRY = 'This is your last try: one more wrong PIN locks the token.';

/**
 * What the token's flags say (PKCS#11 3.0, CK_TOKEN_INFO): CKF_USER_PIN_FINAL_TRY, one more wrong PIN locks it;
 * CKF_USER_PIN_COUNT_LOW, a wrong PIN was entered since the last successful login (not "few tries left").
 */
function pinWarningText(pin: PinState): string {
  if (pin.finalTry) return FINAL_TRY;
  if (pin.countLow) return 'A wrong PIN was entered on this token since it was last used. Too many wrong PINs lock it.';
  return '';
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)} · esign DSC bridge</title>
<style>${STYLE}</style>
</head>
<body>
<main>${body}
</main>
</body>
</html>
`;
}

/** Node gives names one attribute a line, most general first; people read them most specific first. */
export function formatName(name: string): string {
  return name.split('\n').reverse().join(', ');
}

function commonName(name: string): string | undefined {
  return name
    .split('\n')
    .find((line) => line.startsWith('CN='))
    ?.slice(3);
}

function formatDate(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function groupHex(hex: string): string {
  return hex.replace(/(.{8})(?!$)/g, '$1 ');
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
