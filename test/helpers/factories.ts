import type { TestApp } from './app';
import { SANDBOX_OTP } from '../../src/modules/signing/esp/sandbox-esp';
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

/** An Aadhaar signer signs through the sandbox ESP: Aadhaar number and consent, then the sandbox OTP. */
export async function signAsAadhaar(app: TestApp, token: string, aadhaarNumber = '234123412346') {
  const started = await signerApi(app, 'POST', '/aadhaar/otp', token, { aadhaar_number: aadhaarNumber, consent: true });
  if (started.status !== 200) return started;
  return signerApi(app, 'POST', '/sign', token, {
    consent: true,
    transaction_id: started.body.data.transaction_id,
    otp: SANDBOX_OTP,
  });
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
