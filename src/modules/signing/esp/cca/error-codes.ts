/**
 * The `errCode`s with which ESPs report that the signer cancelled on their pages, rather than failed to
 * authenticate. The CCA's ESP error list is not published as such; these are the codes ESPs send (seen in NSDL
 * and eMudhra responses and in ASPs' integration guides): `ESP-944` "User terminated eKYC process" (cancelled
 * before an OTP was sent) and `ESP-945` "User terminated eKYC process after OTP Generation". The sandbox gateway
 * sends the same two.
 */
export const SIGNER_CANCEL_CODES: readonly string[] = ['ESP-944', 'ESP-945'];

/** True when an ESP's failure says the signer cancelled: it costs the signer no attempt. */
export function isSignerCancellation(errCode: string | null | undefined): boolean {
  return SIGNER_CANCEL_CODES.includes((errCode ?? '').trim().toUpperCase());
}
