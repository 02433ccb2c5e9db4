/** The download names of a session's files, from the name the owner uploaded. */
/** The certificate's download name: `contract.pdf` -> `contract-certificate.pdf`. */
export function certificateName(filename: string): string {
  return filename.toLowerCase().endsWith('.pdf') ? `${filename.slice(0, -4)}-certificate.pdf` : `${filename}-certificate.pdf`;
}

/** The signed PDF's download name: `contract.pdf` -> `contract-signed.pdf`. */
export function signedName(filename: string): string {
  return filename.toLowerCase().endsWith('.pdf') ? `${filename.slice(0, -4)}-signed.pdf` : `${filename}-signed.pdf`;
}

/** The ZIP of every signed document of an envelope: `contract.pdf` -> `contract-signed.zip` (made safe as below). */
export function signedZipName(filename: string): string {
  return `${signedName(safeFileName(filename) || 'documents').slice(0, -4)}.zip`;
}

/** A name's most characters in a download name (a document's name may have 255). */
const MAX_NAME_CHARACTERS = 120;

/**
 * The signed documents' download names, which are also their names in the ZIP: each document's name made safe as
 * a file name on any system (no path separators, control or bidirectional-override characters, nor the characters
 * Windows refuses; no leading or trailing dots and spaces; at most 120 characters; `document-N` when nothing is
 * left), then signedName; a name already taken, compared case-insensitively, is numbered (`-2`, `-3`, ...) before
 * `.pdf`.
 */
export function signedDocumentNames(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((name, index) => {
    const base = signedName(safeFileName(name) || `document-${index + 1}`).slice(0, -4);
    let candidate = `${base}.pdf`;
    for (let n = 2; taken.has(candidate.toLowerCase()); n++) candidate = `${base}-${n}.pdf`;
    taken.add(candidate.toLowerCase());
    return candidate;
  });
}

function safeFileName(name: string): string {
  const cleaned = name
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069/\\:*?"<>|]/g, '_')
    .trim();
  return Array.from(cleaned)
    .slice(0, MAX_NAME_CHARACTERS)
    .join('')
    .replace(/^[\s.]+|[\s.]+$/g, '');
}

/** The field-values CSV's download name, from the session's id (the service's own characters: safe in a header). */
export function fieldValuesFileName(clientId: string): string {
  return `${clientId}-field-values.csv`;
}
