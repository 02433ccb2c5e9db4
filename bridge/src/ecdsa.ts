/** DER encoding of ECDSA signatures, which PKCS#11 returns raw. */

/** CKM_ECDSA returns r||s (PKCS#11 2.40, 2.3.1); CMS and X.509 want the DER ECDSA-Sig-Value SEQUENCE {r, s}. */
export function ecdsaRawToDer(raw: Buffer): Buffer {
  const half = raw.length / 2;
  const body = Buffer.concat([derInteger(raw.subarray(0, half)), derInteger(raw.subarray(half))]);
  return Buffer.concat([Buffer.from([0x30]), derLength(body.length), body]);
}

function derInteger(unsigned: Buffer): Buffer {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start++;
  let value = unsigned.subarray(start);
  if (value[0]! & 0x80) value = Buffer.concat([Buffer.from([0]), value]); // keep it positive
  return Buffer.concat([Buffer.from([0x02]), derLength(value.length), value]);
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  if (length < 0x100) return Buffer.from([0x81, length]);
  return Buffer.from([0x82, length >> 8, length & 0xff]);
}
