/**
 * Worker-thread entry of the pool for attacker-supplied bytes (platform/workers): each named export is a task
 * the service runs off its event loop, under the pool's time and memory budget. Inputs and answers are copied
 * across threads (bytes as Uint8Array, reports as plain data).
 */
import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import { workerData } from 'node:worker_threads';
import { inspectImage } from './modules/files/inspect-image';
import { inspectPdfFile } from './modules/files/inspect-pdf';
import { readCertification } from './modules/signing/pdf/certification';
import { prefixStampPages } from './modules/signing/pdf/prefix-stamp-pages';
import type { FormFieldLayout } from './modules/signing/pdf/form-fields';
import { prepareForSigning, type ImagePlacement, type SignerLayout } from './modules/signing/pdf/prepare-for-signing';
import { appendValidationData, type ValidationData } from './modules/signing/pdf/dss';
import { buildAppendedPagesSignatureUpdate } from './modules/signing/pdf/append-signed-pages';
import type { Box } from './modules/signing/pdf/prepare-for-signing';
import {
  renderCompletionCertificate,
  type CompletionCertificateFacts,
} from './modules/esign/completion/render-completion-certificate';
import {
  buildDocumentTimestampUpdate,
  buildSignatureUpdate,
  type SignatureAppearance,
} from './modules/signing/pdf/sign-incrementally';
import { signatureContents } from './modules/signing/verify/signature-fields';
import { verifyPdfSignatures, type VerifyPdfOptions } from './modules/signing/verify/verify-document';
import { renderCertificates, type OrderCertificateFacts } from './modules/stamps/render-certificate';
import type { ProcuredStamp } from './modules/stamps/vendors/vendor';
import { openPkcs12 } from './platform/crypto/pkcs12';
import { createLogger, routeConsoleToLogger } from './platform/logger';
import { workerTask } from './platform/workers/worker-pool';

// What libraries print here (pdf-lib's warnings on damaged files) becomes JSON log lines, as in the main thread.
routeConsoleToLogger(createLogger((workerData as { logLevel?: string } | undefined)?.logLevel ?? 'info'));

/** An upload, spooled to a file: read here (only where its structure lies), so no other thread holds it. */
export const inspectPdfFileTask = workerTask((path: string) => inspectPdfFile(path));

export const inspectImageFileTask = workerTask(async (path: string) => inspectImage(await readFile(path)));

export const inspectImageTask = workerTask((bytes: Uint8Array) => inspectImage(bytes));

export const verifyPdfTask = workerTask((input: { pdf: Uint8Array; options?: VerifyPdfOptions }) =>
  verifyPdfSignatures(input.pdf, input.options),
);

/** A certified document's DocMDP permissions (null: not certified), read before a session is created on it. */
export const readCertificationTask = workerTask((pdf: Uint8Array) => readCertification(pdf));

export const prefixStampPagesTask = workerTask((input: { document: Uint8Array; certificates: Uint8Array[] }) =>
  prefixStampPages(input.document, input.certificates),
);

export const prepareForSigningTask = workerTask(
  (input: { pdf: Uint8Array; signers: SignerLayout[]; images: ImagePlacement[]; formFields?: FormFieldLayout[] }) =>
    prepareForSigning(input.pdf, input.signers, input.images, input.formFields),
);

export const buildSignatureUpdateTask = workerTask((input: { pdf: Uint8Array; appearance: SignatureAppearance }) =>
  buildSignatureUpdate(input.pdf, input.appearance),
);

export const openPkcs12Task = workerTask((input: { bytes: Uint8Array; password: string }) =>
  openPkcs12(input.bytes, input.password),
);

export const signatureContentsTask = workerTask((input: { pdf: Uint8Array }) => signatureContents(input.pdf));

export const appendValidationDataTask = workerTask((input: { pdf: Uint8Array; data: ValidationData }) =>
  appendValidationData(input.pdf, input.data),
);

export const buildDocumentTimestampUpdateTask = workerTask((input: { pdf: Uint8Array; fieldName: string }) =>
  buildDocumentTimestampUpdate(input.pdf, input.fieldName),
);

/** A signature update that appends pages (a certificate of completion) which its own signature covers. */
export const buildAppendedPagesSignatureUpdateTask = workerTask(
  (input: { pdf: Uint8Array; pages: Uint8Array; appearance: SignatureAppearance; box: Box }) =>
    buildAppendedPagesSignatureUpdate(input.pdf, input.pages, input.appearance, input.box),
);

/** A session's certificate of completion (not untrusted bytes: drawing pages is CPU work kept off the event loop). */
export const renderCompletionCertificateTask = workerTask((facts: CompletionCertificateFacts) =>
  renderCompletionCertificate(facts),
);

/** E-stamp certificates of one order (not untrusted bytes: CPU work kept off the procurement job's event loop). */
export const renderCertificatesTask = workerTask(
  (input: { facts: OrderCertificateFacts; stamps: { serial: number; stamp: ProcuredStamp }[] }) =>
    renderCertificates(input.facts, input.stamps),
);
