import type { TestApp } from './app';
import { SANDBOX_BIOMETRIC, SANDBOX_OTP } from '../../src/modules/sandbox/esp/sandbox-esp';
import { MAX_AUTHENTICATION_ATTEMPTS } from '../../src/modules/sandbox/esp/sandbox-esp-gateway';
import { rest, restUpload, signerApi, type RestResponse } from './clients';
import { corpusFile, makePng } from './fixtures';

/** A 4-page PDF of the corpus: pages 0..3. */
export const FOUR_PAGE_PDF = corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf');

export async function uploadPdf(
  app: TestApp,
  token: string,
  bytes: Uint8Array = FOUR_PAGE_PDF,
  filename = 'contract.pdf',
): Promise<string> {
  const response = await restUpload<{ client_id: string }>(app, '/files/upload-pdf', token, { bytes, filename });
  if (response.status !== 200) throw new Error(`upload failed: ${JSON.stringify(response.body)}`);
  return response.body.data!.client_id;
}

export async function uploadAsset(app: TestApp, token: string, bytes: Uint8Array = makePng(40, 20)): Promise<string> {
  const response = await restUpload<{ client_id: string }>(app, '/files/upload-asset', token, { bytes, filename: 'sign.png' });
  if (response.status !== 200) throw new Error(`upload failed: ${JSON.stringify(response.body)}`);
  return response.body.data!.client_id;
}

export function signatureAt(page = 0, x = 72, y = 600): Record<string, unknown> {
  return { x, y, page, type: 'signature', alignment: 'left' };
}

export function signerInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { full_name: 'Asha Rao', email: 'asha@example.com', elements: [signatureAt()], ...overrides };
}

export function sessionBody(fileId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { sign_type: 'suresign', file_id: fileId, signers: [signerInput()], ...overrides };
}

export interface SessionJson {
  client_id: string;
  status: string;
  signer_idx: number;
  signers: { signer_id: string; token: string; eligible: boolean; status: string; [key: string]: unknown }[];
  [key: string]: unknown;
}

export function initializeEsign(app: TestApp, token: string, body: Record<string, unknown>): Promise<RestResponse<SessionJson>> {
  return rest<SessionJson>(app, 'POST', '/esign/initialize-esign', { token, json: body });
}

export async function createSession(app: TestApp, token: string, body: Record<string, unknown>): Promise<SessionJson> {
  const response = await initializeEsign(app, token, body);
  if (response.status !== 200) throw new Error(`initialize failed: ${JSON.stringify(response.body)}`);
  return response.body.data!;
}

/**
 * A page's first form as a browser would submit it: its action (resolved against `pageUrl` when given, else as
 * written) and hidden fields, HTML entities decoded.
 */
export function formOf(html: string, pageUrl?: string): { action: string; fields: Record<string, string> } {
  const form = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) throw new Error(`no form in the page:\n${html}`);
  const unescape = (value: string) => value.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields[input[1]!] = unescape(input[2]!);
  }
  const action = unescape(form[1]!);
  return { action: pageUrl ? new URL(action, pageUrl).toString() : action, fields };
}

/** A form POST as a browser sends it (no redirects followed). */
export async function postForm(url: string, fields: Record<string, string>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields),
    redirect: 'manual',
  });
  return { url, status: response.status, html: await response.text(), location: response.headers.get('location') };
}

export interface AadhaarSigning {
  aadhaar?: string;
  /** The OTP (auth mode 1) or the biometric capture (2) given on the ESP's page. */
  code?: string;
  /** eSign 3.2: the signer's choice on the ESP's page. */
  authMode?: 1 | 2;
  /** Stop on the ESP's page: cancel there instead of authenticating. */
  cancel?: boolean;
  /** Give a wrong OTP (or biometric capture) until the ESP ends the transaction: a failed authentication. */
  failAuthentication?: boolean;
  /** eSign 2.1: keep the ESP's answer instead of carrying it back (`back`: the form the browser would post). */
  holdResponse?: boolean;
}

type FormPost = Awaited<ReturnType<typeof postForm>>;

/**
 * The signer's browser at the ESP, over HTTP: the request form posted to its gateway, the Aadhaar number and
 * consent on its page (or Cancel), the OTP or biometric capture on the next, and for eSign 2.1 the auto-submitted
 * form that carries the response back to the service (`delivered`). Each page as it answered.
 */
export async function throughEsp(
  espUrl: string,
  fields: Record<string, string>,
  { aadhaar = '234123412346', code, authMode, cancel, failAuthentication, holdResponse }: AadhaarSigning = {},
): Promise<{ entry: FormPost; numberPage: FormPost; last: FormPost; delivered?: FormPost; back?: ReturnType<typeof formOf> }> {
  const entry = await postForm(espUrl, fields);
  if (entry.status !== 200) throw new Error(`the ESP refused the request (${entry.status}): ${entry.html}`);
  let form = formOf(entry.html, espUrl);
  const numberPage = await postForm(form.action, {
    ...form.fields,
    aadhaar,
    consent: 'yes',
    ...(authMode ? { authMode: String(authMode) } : {}),
    action: cancel ? 'cancel' : 'continue',
  });
  let last = numberPage;
  if (!cancel && numberPage.status === 200) {
    // A wrong code is answered with the same page again (400), until the ESP's attempts are used up.
    for (let tries = failAuthentication ? MAX_AUTHENTICATION_ATTEMPTS : 1; tries > 0; tries--) {
      form = formOf(last.html, form.action);
      const biometric = last.html.includes('name="biometric"');
      const given = failAuthentication ? (biometric ? 'not-the-capture' : '000000') : undefined;
      last = await postForm(form.action, {
        ...form.fields,
        ...(biometric ? { biometric: given ?? code ?? SANDBOX_BIOMETRIC } : { otp: given ?? code ?? SANDBOX_OTP }),
        action: 'sign',
      });
    }
  }
  if (last.status !== 200 || !last.html.includes('eSignResponse')) return { entry, numberPage, last };
  const back = formOf(last.html, last.url);
  if (holdResponse) return { entry, numberPage, last, back };
  return { entry, numberPage, last, delivered: await postForm(back.action, back.fields) };
}

/**
 * An Aadhaar signer signs as a browser would, over HTTP: consent on the signer API (esp/start), then the form it
 * answers posted to the ESP's gateway (the sandbox ESP, mounted by the service), the Aadhaar number and consent on
 * its page, the OTP on the next, and the response carried back to the service (eSign 2.1: the auto-submitted form;
 * 3.2: the gateway posts it itself). Answers the signer API's answer to start when it refused, else the signer's
 * view afterwards with status 200 when the signature was made (409 when not, with the view as body).
 */
export async function signAsAadhaar(
  app: TestApp,
  token: string,
  options: AadhaarSigning | string = {},
): Promise<{ status: number; body: any; esp?: FormPost }> {
  const signing = typeof options === 'string' ? { aadhaar: options } : options;
  const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
  if (started.status !== 200) return started;
  const { esp_url: espUrl, fields } = started.body.data as { esp_url: string; fields: Record<string, string> };
  const { last, delivered } = await throughEsp(espUrl, fields, signing);
  if (delivered && delivered.status !== 303) return { status: delivered.status, body: { message: delivered.html } };
  const view = await signerApi(app, 'GET', '/session', token);
  const signed = view.body.data?.signer?.esp_transaction?.status === 'completed';
  return { status: signed ? 200 : 409, body: view.body, esp: last };
}

/** POST stamps/create-order for an MH agreement stamp (MH-5), with the fields given replacing the defaults. */
export function createStampOrder(app: TestApp, token: string, overrides: Record<string, unknown> = {}) {
  return rest<any>(app, 'POST', '/stamps/create-order', {
    token,
    json: {
      state_code: 'MH',
      article_id: 'MH-5',
      first_party_name: 'A',
      second_party_name: 'B',
      stamp_duty_amount: 100,
      consideration_amount: 1000,
      quantity: 1,
      ...overrides,
    },
  });
}
