/** The download names of a session's files, from the name the owner uploaded. */
/** The certificate's download name: `contract.pdf` -> `contract-certificate.pdf`. */
export function certificateName(filename: string): string {
  return filename.toLowerCase().endsWith('.pdf') ? `${filename.slice(0, -4)}-certificate.pdf` : `${filename}-certificate.pdf`;
}

/** The signed PDF's download name: `contract.pdf` -> `contract-signed.pdf`. */
export function signedName(filename: string): string {
  return filename.toLowerCase().endsWith('.pdf') ? `${filename.slice(0, -4)}-signed.pdf` : `${filename}-signed.pdf`;
}

/** The field-values CSV's download name, from the session's id (the service's own characters: safe in a header). */
export function fieldValuesFileName(clientId: string): string {
  return `${clientId}-field-values.csv`;
}
