import { AppError, type FieldProblem } from '../../../platform/errors';

/** The bodies of the two DSC steps, read and checked at the boundary (the signer API's JSON, 16 kB at most). */

/** Issuers a token may carry beside the signer's certificate: a CA's chain is two or three. */
const MAX_CHAIN = 5;
/** A certificate's DER: Class 3 DSCs are 1 to 2 kB; anything near this is not one. */
const MAX_CERTIFICATE_BYTES = 8192;
/** An RSA signature of up to 4096 bits. */
const MAX_SIGNATURE_BYTES = 512;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export interface DscStartInput {
  certificate: Buffer;
  chain: Buffer[];
}

export interface DscCompletionInput {
  txn: string;
  /** The token's signature of each document's digest, by document position. */
  signatures: Map<number, Buffer>;
}

/** `{consent: true, certificate: base64 DER, chain?: [base64 DER]}`. */
export function readDscStart(body: Record<string, unknown>): DscStartInput {
  const problems: FieldProblem[] = [];
  if (body.consent !== true) problems.push({ field: 'consent', problem: 'the signer must consent to sign (consent: true)' });
  const certificate = base64(problems, 'certificate', body.certificate, MAX_CERTIFICATE_BYTES);
  const chain: Buffer[] = [];
  if (body.chain !== undefined && body.chain !== null) {
    if (!Array.isArray(body.chain) || body.chain.length > MAX_CHAIN)
      problems.push({ field: 'chain', problem: `a list of at most ${MAX_CHAIN} base64 DER certificates` });
    else
      body.chain.forEach((entry, index) => {
        const der = base64(problems, `chain[${index}]`, entry, MAX_CERTIFICATE_BYTES);
        if (der) chain.push(der);
      });
  }
  if (problems.length > 0 || !certificate) throw AppError.badRequest(problems);
  return { certificate, chain };
}

/** `{txn, signatures: [{position, signature: base64}]}`. */
export function readDscCompletion(body: Record<string, unknown>): DscCompletionInput {
  const problems: FieldProblem[] = [];
  const txn = body.txn;
  if (typeof txn !== 'string' || !/^dsctxn_[0-9a-f]{32}$/.test(txn))
    problems.push({ field: 'txn', problem: 'the txn the DSC start answered' });
  const signatures = new Map<number, Buffer>();
  if (!Array.isArray(body.signatures) || body.signatures.length === 0 || body.signatures.length > 10) {
    problems.push({ field: 'signatures', problem: 'a list of {position, signature} for each document, 1 to 10' });
  } else {
    body.signatures.forEach((entry: unknown, index) => {
      const item = (entry && typeof entry === 'object' ? entry : {}) as Record<string, unknown>;
      const position = item.position;
      if (typeof position !== 'number' || !Number.isInteger(position) || position < 0 || position > 99) {
        problems.push({ field: `signatures[${index}].position`, problem: 'a zero-based document position' });
        return;
      }
      if (signatures.has(position)) problems.push({ field: `signatures[${index}].position`, problem: 'given twice' });
      const signature = base64(problems, `signatures[${index}].signature`, item.signature, MAX_SIGNATURE_BYTES);
      if (signature) signatures.set(position, signature);
    });
  }
  if (problems.length > 0) throw AppError.badRequest(problems);
  return { txn: txn as string, signatures };
}

function base64(problems: FieldProblem[], field: string, value: unknown, maxBytes: number): Buffer | undefined {
  if (typeof value !== 'string' || value === '') {
    problems.push({ field, problem: 'required, in base64' });
    return undefined;
  }
  if (value.length > Math.ceil(maxBytes / 3) * 4 || !BASE64.test(value)) {
    problems.push({ field, problem: `base64 of at most ${maxBytes} bytes` });
    return undefined;
  }
  return Buffer.from(value, 'base64');
}
