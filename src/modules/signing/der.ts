/**
 * The small DER codec the CMS code uses: a writer for what we sign, and a reader for what others send (the CMS
 * of a signature found in an uploaded PDF, the certificates it carries). The reader's input is attacker-supplied,
 * so it promises, for any bytes at all:
 *
 * - it refuses with `DerError` and nothing else (no RangeError, no TypeError from a missing element);
 * - it reads only inside `[position, limit)` of the buffer it is given; every length is checked against what is
 *   left of the input before it is used, so a 10-byte input declaring a 4 GB length is refused at once;
 * - it allocates no byte buffer: values are `subarray` views of the input (see `raw`, `contentOf`);
 * - it nests at most `MAX_DER_DEPTH` levels (definite lengths, which `children` follows, and BER indefinite
 *   lengths, the only place where the reader recurses), and a constructed value has at most `MAX_DER_CHILDREN`
 *   elements, so the work and the memory a parse takes grow linearly with the input.
 *
 * BER indefinite lengths (constructed values only) are accepted, as some signers stream their CMS; everything
 * else a DER reader should refuse beyond that (non-minimal lengths) is tolerated, since nothing here re-encodes.
 * test/security/der-fuzz.test.ts checks these promises with fast-check.
 */

/** The one error the reader throws: the bytes are not the DER (or BER) structure expected. */
export class DerError extends Error {
  override name = 'DerError';
}

/** How deep values may nest, counting from the value read at depth 0. */
export const MAX_DER_DEPTH = 64;
/** How many elements a constructed value may hold (a CMS has a handful of certificates and attributes). */
export const MAX_DER_CHILDREN = 1024;
/** The longest OBJECT IDENTIFIER encoding accepted (a UUID arc, 2.25.x, needs 20 bytes). */
export const MAX_OID_BYTES = 128;

export const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
  context0: 0xa0,
  context1: 0xa1,
  context2: 0xa2,
  context4: 0xa4,
} as const;

// ---------------------------------------------------------------------------------------------------------------
// Writing

export function der(tag: number, ...content: Uint8Array[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

/** A SET OF in DER: the element encodings in ascending byte order (X.690 11.6). */
export function derSetOf(tag: number, elements: Buffer[]): Buffer {
  return der(tag, ...[...elements].sort(Buffer.compare));
}

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function integer(value: number): Buffer {
  if (!Number.isInteger(value) || value < 0 || value > 0x7f)
    throw new RangeError('integer() writes small non-negative values only');
  return der(TAG.integer, Buffer.from([value]));
}

/** A non-negative INTEGER from its big-endian bytes (a serial number, a nonce), minimally encoded. */
export function unsignedInteger(bytes: Uint8Array): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const value = Buffer.from(bytes.subarray(start));
  return der(TAG.integer, value[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
}

export function boolean(value: boolean): Buffer {
  return der(TAG.boolean, Buffer.from([value ? 0xff : 0x00]));
}

/** GeneralizedTime in UTC with milliseconds where there are any (DER: no trailing zeros, no empty fraction). */
export function generalizedTime(date: Date): Buffer {
  const text = date
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.?0*Z$/, 'Z');
  return der(TAG.generalizedTime, Buffer.from(text, 'latin1'));
}

export function oid(dotted: string): Buffer {
  // BigInt arcs: a UUID arc (2.25.<128 bits>) does not fit a Number.
  const arcs = dotted.split('.').map(BigInt);
  const bytes: number[] = [];
  for (const arc of [arcs[0]! * 40n + arcs[1]!, ...arcs.slice(2)]) {
    const group = [Number(arc % 128n)];
    for (let rest = arc / 128n; rest > 0n; rest /= 128n) group.unshift(0x80 | Number(rest % 128n));
    bytes.push(...group);
  }
  return der(TAG.oid, Buffer.from(bytes));
}

// ---------------------------------------------------------------------------------------------------------------
// Reading: a minimal DER (and BER definite/indefinite length) reader that keeps byte offsets

export interface Tlv {
  tag: number;
  /** Offsets into the buffer the value was read from: the tag, the contents, the end of the contents... */
  start: number;
  contentStart: number;
  contentEnd: number;
  /** ...and the end of the whole value (after the end-of-contents octets of an indefinite length). */
  end: number;
  /** How deep this value is below the one read first (0). */
  depth: number;
}

/**
 * The value that starts at `position` and ends at or before `limit` (the end of its parent's contents, or of
 * the input). `position` and `limit` are the caller's, and must lie inside `bytes`: everything the bytes say is
 * checked.
 */
export function readTlv(bytes: Uint8Array, position: number, limit: number, depth = 0): Tlv {
  if (!(Number.isSafeInteger(position) && Number.isSafeInteger(limit) && position >= 0 && limit <= bytes.length))
    throw new RangeError('readTlv: position and limit must lie inside the buffer');
  if (depth > MAX_DER_DEPTH) throw new DerError(`nested more than ${MAX_DER_DEPTH} levels deep`);
  if (position + 2 > limit) throw new DerError('truncated');
  const tag = bytes[position]!;
  if ((tag & 0x1f) === 0x1f) throw new DerError('high tag numbers are not supported');
  let cursor = position + 1;
  const first = bytes[cursor++]!;
  if (first === 0x80) {
    if (!(tag & 0x20)) throw new DerError('indefinite length on a primitive value');
    // Each turn moves on by at least two bytes (a child is at least a tag and a length), so this ends.
    for (let child = cursor; ; child = readTlv(bytes, child, limit, depth + 1).end) {
      if (child + 2 > limit) throw new DerError('truncated indefinite-length value');
      if (bytes[child] === 0 && bytes[child + 1] === 0)
        return { tag, start: position, contentStart: cursor, contentEnd: child, end: child + 2, depth };
    }
  }
  let length = first;
  if (first & 0x80) {
    const count = first & 0x7f;
    // At most 4 length octets (< 4 GiB), and they must be there.
    if (count > 4 || cursor + count > limit) throw new DerError('bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[cursor++]!;
  }
  if (length > limit - cursor) throw new DerError('truncated: the length goes past the end of its parent');
  return { tag, start: position, contentStart: cursor, contentEnd: cursor + length, end: cursor + length, depth };
}

/** The one value that `bytes` holds, from its first byte (what follows it is the caller's business). */
export function readRoot(bytes: Uint8Array): Tlv {
  return readTlv(bytes, 0, bytes.length);
}

/** The elements of a constructed value, in order (at most `max`). */
export function children(bytes: Uint8Array, parent: Tlv, max = MAX_DER_CHILDREN): Tlv[] {
  if (!(parent.tag & 0x20)) throw new DerError(`expected a constructed value, found tag 0x${parent.tag.toString(16)}`);
  const list: Tlv[] = [];
  for (let position = parent.contentStart; position < parent.contentEnd;) {
    if (list.length === max) throw new DerError(`more than ${max} elements in one value`);
    const child = readTlv(bytes, position, parent.contentEnd, parent.depth + 1);
    list.push(child);
    position = child.end;
  }
  return list;
}

export function expectTag(tlv: Tlv | undefined, tag: number, what: string): Tlv {
  if (!tlv) throw new DerError(`${what} is missing`);
  if (tlv.tag !== tag) throw new DerError(`${what}: expected tag 0x${tag.toString(16)}, found 0x${tlv.tag.toString(16)}`);
  return tlv;
}

/** The whole encoding of a value (tag, length, contents): a view of `bytes`, not a copy. */
export function raw(bytes: Buffer, tlv: Tlv): Buffer {
  return bytes.subarray(tlv.start, tlv.end);
}

/** The contents of a value: a view of `bytes`, not a copy. */
export function contentOf(bytes: Buffer, tlv: Tlv): Buffer {
  return bytes.subarray(tlv.contentStart, tlv.contentEnd);
}

/** An OBJECT IDENTIFIER in dotted form; exact for arcs of any size (2.25.<UUID>). */
export function readOid(bytes: Uint8Array, tlv: Tlv | undefined): string {
  const value = expectTag(tlv, TAG.oid, 'OBJECT IDENTIFIER');
  const length = value.contentEnd - value.contentStart;
  if (length === 0 || length > MAX_OID_BYTES) throw new DerError(`bad OBJECT IDENTIFIER (${length} bytes)`);
  if (bytes[value.contentEnd - 1]! & 0x80) throw new DerError('bad OBJECT IDENTIFIER (its last arc is cut)');
  const arcs: string[] = [];
  let arc = 0n;
  let arcStart = true;
  for (let at = value.contentStart; at < value.contentEnd; at++) {
    const byte = bytes[at]!;
    // X.690 8.19.2: an arc is encoded in as few bytes as possible (the same OID has only one encoding).
    if (arcStart && byte === 0x80) throw new DerError('bad OBJECT IDENTIFIER (an arc has a leading 0x80)');
    arc = arc * 128n + BigInt(byte & 0x7f);
    arcStart = !(byte & 0x80);
    if (!arcStart) continue;
    if (arcs.length === 0) arcs.push(...(arc < 80n ? [String(arc / 40n), String(arc % 40n)] : ['2', String(arc - 80n)]));
    else arcs.push(String(arc));
    arc = 0n;
  }
  return arcs.join('.');
}

/** A time value: UTCTime (YYMMDDHHMMSSZ) or GeneralizedTime (YYYYMMDDHHMMSS[.f]Z), as a valid Date. */
export function readTime(encoded: Buffer): Date {
  const tlv = readRoot(encoded);
  const text = contentOf(encoded, tlv).toString('latin1');
  const match =
    tlv.tag === TAG.utcTime
      ? /^(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(text)
      : tlv.tag === TAG.generalizedTime
        ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d{1,9})?Z$/.exec(text)
        : null;
  if (!match) throw new DerError(`bad time ${JSON.stringify(text.slice(0, 64))}`);
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [number, number, number, number, number, number];
  const fullYear = tlv.tag === TAG.utcTime ? (year < 50 ? 2000 + year : 1900 + year) : year;
  const date = new Date(0);
  date.setUTCFullYear(fullYear, month - 1, day); // not Date.UTC, which reads years 0 to 99 as 1900 to 1999
  date.setUTCHours(hour, minute, second);
  // Dates roll 31 February over into March: a field out of range is refused instead.
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59)
    throw new DerError(`bad time ${JSON.stringify(text)}`);
  return date;
}
