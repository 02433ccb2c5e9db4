const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificates a text holds (a bundle: TRUST_ANCHORS, ESP_<NAME>_CERT, SANDBOX_ESP_ASP_CERTS), in order. */
export function certificatesInPem(text: string): string[] {
  return text.match(PEM_CERTIFICATE) ?? [];
}
