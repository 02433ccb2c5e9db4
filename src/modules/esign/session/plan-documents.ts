import { isAbsent, text, type Problems } from '../../../platform/validation/problems';
import type { SessionRequest } from './session.inputs';
import { LIMITS } from './validation';

/** A document as asked for: the upload it names (checked against the caller's files later) and its name, if given. */
export interface RequestedDocument {
  fileId: string;
  name?: string;
  /** Where the request named it, for problems: `file_id` or `documents[2].file_id`. */
  field: string;
}

/**
 * The envelope's documents: `file_id` alone is the contract's one-document session; `documents` (added) lists up to
 * LIMITS.documents.max. One or the other, never both. Templates take their documents by the same rules.
 */
export function requestedDocuments(
  problems: Problems,
  request: Pick<SessionRequest, 'file_id' | 'documents'>,
): RequestedDocument[] {
  const { documents } = request;
  if (isAbsent(documents)) {
    if (isAbsent(request.file_id)) problems.missingField('file_id');
    return isAbsent(request.file_id) ? [] : [{ fileId: request.file_id!.trim(), field: 'file_id' }];
  }
  if (!isAbsent(request.file_id)) {
    problems.invalidField('documents', 'give either file_id (one document) or documents, not both');
    return [];
  }
  const { min, max } = LIMITS.documents;
  if (documents!.length < min || documents!.length > max) {
    problems.invalidField('documents', `from ${min} to ${max} documents`);
    return [];
  }
  return documents!.flatMap((document, index) => {
    const field = `documents[${index}]`;
    if (isAbsent(document?.file_id)) {
      problems.missingField(`${field}.file_id`);
      return [];
    }
    const name = text(problems, `${field}.name`, document.name, 255);
    return [{ fileId: document.file_id!.trim(), name, field: `${field}.file_id` }];
  });
}

/**
 * A zero-based index into the envelope's documents; absent: the first. Undefined, with the problem named, when it
 * is none (not checked against an envelope that was itself refused: `count` 0).
 */
export function documentIndex(
  problems: Problems,
  field: string,
  value: number | null | undefined,
  count: number,
): number | undefined {
  if (isAbsent(value)) return 0;
  if (!Number.isInteger(value) || value! < 0 || (count > 0 && value! >= count)) {
    problems.invalidField(field, `must be a zero-based index into documents (0 to ${Math.max(count - 1, 0)})`);
    return undefined;
  }
  return value!;
}
