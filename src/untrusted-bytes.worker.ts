/**
 * Worker-thread entry of the pool for attacker-supplied bytes (platform/workers): each named export is a task
 * the service runs off its event loop, under the pool's time and memory budget. Inputs and answers are copied
 * across threads (bytes as Uint8Array, reports as plain data).
 */
import 'reflect-metadata';
import { inspectImage } from './modules/files/inspect-image';
import { inspectPdf } from './modules/files/inspect-pdf';
import { verifyPdfSignatures, type VerifyPdfOptions } from './modules/signing/verify-document';
import { workerTask } from './platform/workers/worker-pool';

export const inspectPdfTask = workerTask((bytes: Uint8Array) => inspectPdf(bytes));

export const inspectImageTask = workerTask((bytes: Uint8Array) => inspectImage(bytes));

export const verifyPdfTask = workerTask((input: { pdf: Uint8Array; options?: VerifyPdfOptions }) =>
  verifyPdfSignatures(input.pdf, input.options),
);
