/**
 * How the signing module prints a certificate's distinguished name (a verified signer's subject and the names in
 * chain problems, `subjectString`, `describeCertificate`): RFC 4514 order, most specific RDN first, ", " between
 * them: "CN=Asha Rao, ST=Karnataka, C=IN".
 *
 * A name reaches it in one of two forms, and each attribute is printed as that form has it:
 * - decoded attributes (type OID and text value, as certificates.ts reads them with node-forge): printed here with
 *   RFC 4514 labels and escaping;
 * - OpenSSL's text, as Node's `X509Certificate` gives it (`.subject`, `.issuer`): CMS verification prints the
 *   certificates of uploaded PDFs this way, which OpenSSL has parsed already and which cannot throw.
 * Both print every certificate this service issues alike. They differ only in what OpenSSL prints its own way:
 * streetAddress is `STREET=` decoded and `street=` from OpenSSL; a multi-valued RDN is printed as separate RDNs
 * ("OU=Unit, O=Org") decoded and as one ("O=Org + OU=Unit") from OpenSSL; control characters stay raw decoded and
 * are escaped in hex ("\0A") by OpenSSL.
 */

/** One attribute of a Name: its type (dotted OID) and its value as text. */
export interface NameAttribute {
  type: string;
  value: string;
}

/**
 * A certificate's Name, most general RDN first (as encoded): decoded attributes, or OpenSSL's text of it as Node's
 * `X509Certificate.subject` / `.issuer` give it (one RDN a line; undefined for an empty name).
 */
export type CertificateName = readonly NameAttribute[] | string | undefined;

export function formatDistinguishedName(name: CertificateName): string {
  const rdns = typeof name === 'string' || name === undefined ? (name ?? '').split('\n') : name.map(printAttribute);
  return rdns.reverse().join(', ');
}

/** Labels of decoded attributes: RFC 4514 short names where it has them, OpenSSL's names otherwise. */
const LABELS: Readonly<Record<string, string>> = {
  '2.5.4.3': 'CN',
  '2.5.4.5': 'serialNumber',
  '2.5.4.6': 'C',
  '2.5.4.7': 'L',
  '2.5.4.8': 'ST',
  '2.5.4.9': 'STREET',
  '2.5.4.10': 'O',
  '2.5.4.11': 'OU',
  '2.5.4.12': 'title',
  '2.5.4.13': 'description',
  '2.5.4.17': 'postalCode',
  '2.5.4.4': 'SN',
  '2.5.4.42': 'GN',
  '2.5.4.46': 'dnQualifier',
  '2.5.4.65': 'pseudonym',
  '1.2.840.113549.1.9.1': 'emailAddress',
  '0.9.2342.19200300.100.1.25': 'DC',
  '0.9.2342.19200300.100.1.1': 'UID',
};

function printAttribute({ type, value }: NameAttribute): string {
  return `${LABELS[type] ?? type}=${escapeValue(value)}`;
}

/** `,` `+` `"` `\` `<` `>` `;` and a leading `#` or space or a trailing space, backslash-escaped (RFC 4514). */
function escapeValue(value: string): string {
  let escaped = value.replace(/[,+"\\<>;]/g, (char) => `\\${char}`);
  if (escaped.startsWith('#') || escaped.startsWith(' ')) escaped = `\\${escaped}`;
  if (value.length > 1 && value.endsWith(' ')) escaped = `${escaped.slice(0, -1)}\\ `;
  return escaped;
}
