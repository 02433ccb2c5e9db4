/**
 * Fuzzing the DER reader that reads attacker-supplied bytes (the CMS of a signature in an uploaded PDF, and the
 * certificates it carries), with fast-check. For any bytes, every entry point either returns or refuses with
 * `DerError`:
 *
 * - der.ts: `readRoot`/`readTlv` and `children` (walked over the whole tree here), `readOid`, `readTime`;
 * - cms-parse.ts: `parseSignedData` (throws `DerError` only), and cms-verify.ts: `verifyDetachedCms` (never throws: a refusal is a
 *   "malformed CMS" problem);
 * - verify-document.ts: `verifyPdfSignatures`, what `GET /api/v1/esign/verify` runs, on a signed PDF whose
 *   /Contents holds a mutated CMS (never throws, reports the signature).
 *
 * Inputs: arbitrary bytes (0 to 4 KB), random DER-shaped trees, and mutations of real CMS (signed by the
 * service's own `signDetachedCms`, and by `openssl cms -sign` as DER, as streamed BER with indefinite lengths,
 * identified by subjectKeyIdentifier, with an EC key): tree edits re-encoded with consistent lengths (retag,
 * drop, duplicate, replace, new contents, indefinite lengths, thousands of nested SEQUENCEs), then byte edits
 * (bit flips, insertions, deletions, truncations, length octets rewritten to huge or off-by-a-few values).
 *
 * No hang: each parse is timed and the slowest is printed at the end, but no time is asserted (tests never judge
 * wall-clock time: a loaded CI machine made a 1 s bound fail on a 1 MB input). The parse is synchronous, so a
 * truly endless loop would stall this file until the CI job's own time limit: what excludes one is der.ts's
 * structure (every step moves on by at least two bytes, nesting is bounded), and the walk's node count is
 * asserted to stay within half the input's length. Allocation: during each
 * parse, Buffer's allocating functions are watched and none may return more bytes than the input holds; every
 * Buffer a parse returns is a view of the input; a 4 GB length declared in 10 bytes allocates nothing.
 *
 * DER_FUZZ_SCALE=10 multiplies the number of runs (for a longer local session; CI runs the default).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { PDFDocument, PDFHexString, PDFName, PDFNumber, PDFString } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRootCa, issueSigningCertificate, type KeyAndCertificate } from '../../src/modules/signing/certificates';
import { parseSignedData, type ParsedSignedData } from '../../src/modules/signing/cms-parse';
import { signDetachedCms } from '../../src/modules/signing/cms-sign';
import { verifyDetachedCms } from '../../src/modules/signing/cms-verify';
import { children, DerError, MAX_DER_DEPTH, readOid, readRoot, readTime, readTlv, type Tlv } from '../../src/modules/signing/der';
import { verifyPdfSignatures } from '../../src/modules/signing/verify/verify-document';

const SCALE = Math.max(1, Number(process.env.DER_FUZZ_SCALE ?? 1));
const runs = (n: number) => Math.round(n * SCALE);

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const content = Buffer.from('%PDF-1.7 the bytes a ByteRange covers\n'.repeat(50));

let cases = 0;
let slowest = 0;

// ---------------------------------------------------------------------------------------------------------------
// The oracle: what "refuses cleanly" means

/** Runs `parse`: it returns, or throws a DerError. Anything else (TypeError, RangeError...) fails the test. */
function cleanly<T>(what: string, input: Uint8Array, parse: () => T): T | DerError {
  const started = performance.now();
  try {
    return parse();
  } catch (error) {
    if (error instanceof DerError) return error;
    throw new Error(`${what} threw ${String(error)} instead of a DerError on ${Buffer.from(input).toString('hex')}`, {
      cause: error,
    });
  } finally {
    slowest = Math.max(slowest, performance.now() - started);
  }
}

/** Buffer's allocating functions, watched during a parse: the largest buffer each returned that is not a view. */
const ALLOCATORS = ['alloc', 'allocUnsafe', 'allocUnsafeSlow', 'from', 'concat'] as const;
function largestAllocation<T>(input: Uint8Array, run: () => T): { result: T; largest: number } {
  const originals = ALLOCATORS.map((name) => Buffer[name]);
  let largest = 0;
  ALLOCATORS.forEach((name, index) => {
    const original = originals[index] as unknown as (...args: unknown[]) => Buffer;
    (Buffer as unknown as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
      const made = original.apply(this, args);
      if (made.buffer !== input.buffer) largest = Math.max(largest, made.byteLength);
      return made;
    };
  });
  try {
    return { result: run(), largest };
  } finally {
    ALLOCATORS.forEach((name, index) => ((Buffer as unknown as Record<string, unknown>)[name] = originals[index]));
  }
}

/** Every node of the tree, iteratively (children of constructed values, OIDs and times decoded on the way). */
function walk(bytes: Buffer): number {
  let nodes = 0;
  const stack: Tlv[] = [readRoot(bytes)];
  while (stack.length > 0) {
    const tlv = stack.pop()!;
    nodes++;
    expect(0 <= tlv.start && tlv.start < tlv.contentStart && tlv.contentStart <= tlv.contentEnd).toBe(true);
    expect(tlv.contentEnd <= tlv.end && tlv.end <= bytes.length && tlv.depth <= MAX_DER_DEPTH).toBe(true);
    if (tlv.tag & 0x20) stack.push(...children(bytes, tlv));
    else if (tlv.tag === 0x06) readOidOrRefuse(bytes, tlv);
    else if (tlv.tag === 0x17 || tlv.tag === 0x18) readTimeOrRefuse(bytes.subarray(tlv.start, tlv.end));
  }
  return nodes;
}

function readOidOrRefuse(bytes: Buffer, tlv: Tlv): void {
  try {
    expect(readOid(bytes, tlv)).toMatch(/^\d+(\.\d+)+$/);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
  }
}

function readTimeOrRefuse(encoded: Buffer): void {
  try {
    expect(Number.isNaN(readTime(encoded).getTime())).toBe(false);
  } catch (error) {
    if (!(error instanceof DerError)) throw error;
  }
}

/** Every Buffer the parse returned is a view of the input, no longer than it. */
function expectViewsOfInput(parsed: ParsedSignedData, input: Buffer): void {
  const info = parsed.signerInfo;
  const buffers = [info.issuer, info.serial, info.signedAttrs, info.signature, ...[...info.attributes.values()].flat()];
  for (const buffer of buffers) {
    if (buffer === null) continue;
    expect(buffer.buffer).toBe(input.buffer);
    expect(buffer.byteLength).toBeLessThanOrEqual(input.byteLength);
  }
}

/** Everything a CMS goes through, with the checks above. */
async function checkCms(input: Uint8Array, roots?: string[]): Promise<void> {
  cases++;
  const bytes = own(input);
  const walked = largestAllocation(bytes, () => cleanly('walking the DER tree', bytes, () => walk(bytes)));
  if (typeof walked.result === 'number') expect(walked.result).toBeLessThanOrEqual(Math.ceil(bytes.length / 2));
  expect(walked.largest).toBeLessThanOrEqual(bytes.length);

  const parsed = largestAllocation(bytes, () => cleanly('parseSignedData', bytes, () => parseSignedData(bytes)));
  expect(parsed.largest).toBeLessThanOrEqual(bytes.length);
  if (!(parsed.result instanceof DerError)) expectViewsOfInput(parsed.result, bytes);

  const verified = await verifyDetachedCms(bytes, content, { trustedRootsPem: roots }); // must not reject
  if (parsed.result instanceof DerError) expect(verified.problems).toContain(`malformed CMS: ${parsed.result.message}`);
}

/** A copy with an ArrayBuffer of its own (not Node's shared pool), so that "a view of the input" means exactly that. */
function own(bytes: Uint8Array): Buffer {
  return Buffer.from(new Uint8Array(bytes).buffer);
}

// ---------------------------------------------------------------------------------------------------------------
// A DER tree model for structure-aware mutation (encoded with consistent lengths)

interface DerNode {
  tag: number;
  /** Constructed: the elements; otherwise (or to force raw contents under any tag) `content`. */
  children?: DerNode[];
  content?: Uint8Array;
  indefinite?: boolean;
  /** Wrapped in this many SEQUENCE headers (definite or indefinite lengths). */
  wraps?: { depth: number; indefinite: boolean };
}

function toTree(bytes: Buffer, tlv: Tlv = readRoot(bytes)): DerNode {
  const indefinite = bytes[tlv.start + 1] === 0x80;
  if (tlv.tag & 0x20) return { tag: tlv.tag, children: children(bytes, tlv).map((child) => toTree(bytes, child)), indefinite };
  return { tag: tlv.tag, content: bytes.subarray(tlv.contentStart, tlv.contentEnd) };
}

function lengthOctets(length: number): number[] {
  if (length < 0x80) return [length];
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return [0x80 | octets.length, ...octets];
}

function encode(node: DerNode): Buffer {
  const body = node.content ? Buffer.from(node.content) : Buffer.concat((node.children ?? []).map(encode));
  const encoded = node.indefinite
    ? Buffer.concat([Buffer.from([node.tag, 0x80]), body, Buffer.from([0, 0])])
    : Buffer.concat([Buffer.from([node.tag, ...lengthOctets(body.length)]), body]);
  return node.wraps ? wrap(encoded, node.wraps.depth, node.wraps.indefinite) : encoded;
}

/** `encoded` inside `depth` SEQUENCEs, without recursion. */
function wrap(encoded: Buffer, depth: number, indefinite: boolean): Buffer {
  if (indefinite) return Buffer.concat([Buffer.alloc(2 * depth, Buffer.from([0x30, 0x80])), encoded, Buffer.alloc(2 * depth)]);
  const headers: number[][] = [];
  for (let i = 0, length = encoded.length; i < depth; i++) {
    const header = [0x30, ...lengthOctets(length)];
    headers.push(header);
    length += header.length;
  }
  return Buffer.concat([Buffer.from(headers.reverse().flat()), encoded]);
}

function preorder(root: DerNode): { node: DerNode; parent: DerNode | null }[] {
  const list: { node: DerNode; parent: DerNode | null }[] = [];
  const stack: { node: DerNode; parent: DerNode | null }[] = [{ node: root, parent: null }];
  while (stack.length > 0) {
    const entry = stack.pop()!;
    list.push(entry);
    for (const child of [...(entry.node.children ?? [])].reverse()) stack.push({ node: child, parent: entry.node });
  }
  return list;
}

function clone(node: DerNode): DerNode {
  return { ...node, children: node.children?.map(clone) };
}

type TreeEdit =
  | { kind: 'retag'; node: number; tag: number }
  | { kind: 'drop' | 'duplicate' | 'indefinite'; node: number }
  | { kind: 'replace'; node: number; other: number }
  | { kind: 'content'; node: number; bytes: Uint8Array }
  | { kind: 'wrap'; node: number; depth: number; indefinite: boolean };

function applyTreeEdit(root: DerNode, edit: TreeEdit): void {
  const nodes = preorder(root);
  const { node, parent } = nodes[edit.node % nodes.length]!;
  switch (edit.kind) {
    case 'retag':
      node.tag = edit.tag;
      break;
    case 'drop':
      if (parent) parent.children!.splice(parent.children!.indexOf(node), 1);
      else node.children = [];
      break;
    case 'duplicate':
      if (parent) parent.children!.splice(parent.children!.indexOf(node), 0, clone(node));
      break;
    case 'indefinite':
      node.indefinite = !!node.children;
      break;
    case 'replace':
      Object.assign(node, clone(nodes[edit.other % nodes.length]!.node));
      break;
    case 'content':
      node.content = edit.bytes;
      delete node.children;
      break;
    case 'wrap':
      node.wraps = { depth: edit.depth, indefinite: edit.indefinite };
      break;
  }
}

type ByteEdit =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'set'; at: number; value: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'length'; header: number; octets: readonly number[] }
  | { kind: 'nudge'; header: number; delta: number };

/** Where values start and their contents begin, as far as the bytes can be read. */
function headers(bytes: Buffer): Tlv[] {
  const found: Tlv[] = [];
  const stack: { position: number; limit: number }[] = [{ position: 0, limit: bytes.length }];
  while (stack.length > 0 && found.length < 4096) {
    const { position, limit } = stack.pop()!;
    try {
      const tlv = readTlv(bytes, position, limit);
      found.push(tlv);
      if (tlv.end < limit) stack.push({ position: tlv.end, limit });
      if (tlv.tag & 0x20 && tlv.contentStart < tlv.contentEnd) stack.push({ position: tlv.contentStart, limit: tlv.contentEnd });
    } catch (error) {
      if (!(error instanceof DerError)) throw error;
    }
  }
  return found;
}

function applyByteEdit(bytes: Buffer, edit: ByteEdit): Buffer {
  if (bytes.length === 0) return bytes;
  const at = 'at' in edit ? edit.at % bytes.length : 0;
  switch (edit.kind) {
    case 'flip':
      bytes[at] ^= 1 << edit.bit;
      return bytes;
    case 'set':
      bytes[at] = edit.value;
      return bytes;
    case 'insert':
      return Buffer.concat([bytes.subarray(0, at), edit.bytes, bytes.subarray(at)]);
    case 'delete':
      return Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + edit.count)]);
    case 'truncate':
      return bytes.subarray(0, at);
    case 'length':
    case 'nudge': {
      const found = headers(bytes);
      if (found.length === 0) return bytes;
      const tlv = found[edit.header % found.length]!;
      const octets =
        edit.kind === 'length' ? edit.octets : lengthOctets(Math.max(0, tlv.contentEnd - tlv.contentStart + edit.delta));
      return Buffer.concat([bytes.subarray(0, tlv.start + 1), Buffer.from(octets), bytes.subarray(tlv.contentStart)]);
    }
  }
}

const position = fc.nat();
const lengthRewrite = fc.oneof(
  fc.constant([0x84, 0xff, 0xff, 0xff, 0xff]), // 4 GB
  fc.constant([0x84, 0x7f, 0xff, 0xff, 0xff]),
  fc.constant([0x80]), // indefinite
  fc.constant([0xff]), // reserved
  fc.constant([0x85, 0x01, 0x00, 0x00, 0x00, 0x00]), // 5 length octets
  fc.constant([0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
  fc.integer({ min: 0, max: 0x7f }).map((n) => [n]),
  fc.integer({ min: 0, max: 0xff }).map((n) => [0x81, n]),
  fc.integer({ min: 0, max: 0xffff }).map((n) => [0x82, n >> 8, n & 0xff]),
  fc.integer({ min: 0, max: 0xffffff }).map((n) => [0x83, n >> 16, (n >> 8) & 0xff, n & 0xff]),
);
const nesting = fc.oneof(fc.integer({ min: 1, max: MAX_DER_DEPTH + 8 }), fc.integer({ min: 1000, max: 4000 }));

const treeEdit: fc.Arbitrary<TreeEdit> = fc.oneof(
  fc.record({ kind: fc.constant('retag' as const), node: position, tag: fc.integer({ min: 0, max: 0xff }) }),
  fc.record({ kind: fc.constantFrom('drop' as const, 'duplicate' as const, 'indefinite' as const), node: position }),
  fc.record({ kind: fc.constant('replace' as const), node: position, other: position }),
  fc.record({ kind: fc.constant('content' as const), node: position, bytes: fc.uint8Array({ maxLength: 48 }) }),
  fc.record({ kind: fc.constant('wrap' as const), node: position, depth: nesting, indefinite: fc.boolean() }),
);

const byteEdit: fc.Arbitrary<ByteEdit> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: position, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('set' as const), at: position, value: fc.integer({ min: 0, max: 0xff }) }),
  fc.record({ kind: fc.constant('insert' as const), at: position, bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ kind: fc.constant('delete' as const), at: position, count: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: position }),
  fc.record({ kind: fc.constant('length' as const), header: position, octets: lengthRewrite }),
  fc.record({ kind: fc.constant('nudge' as const), header: position, delta: fc.integer({ min: -3, max: 3 }) }),
);

interface Mutation {
  seed: number;
  tree: TreeEdit[];
  bytes: ByteEdit[];
}

const mutation: fc.Arbitrary<Mutation> = fc.record({
  seed: fc.nat(),
  tree: fc.array(treeEdit, { maxLength: 2 }),
  bytes: fc.array(byteEdit, { maxLength: 3 }),
});

function mutate(seeds: Buffer[], { seed, tree, bytes }: Mutation): Buffer {
  const original = seeds[seed % seeds.length]!;
  let mutated: Buffer = Buffer.from(original);
  if (tree.length > 0) {
    const root = toTree(original);
    for (const edit of tree) applyTreeEdit(root, edit);
    mutated = encode(root);
  }
  for (const edit of bytes) mutated = applyByteEdit(mutated, edit);
  return mutated;
}

/** Random DER-shaped trees: they get past the first tag far more often than random bytes. */
const randomTree: fc.Arbitrary<DerNode> = fc.letrec<{ node: DerNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({
      tag: fc.oneof(
        fc.constantFrom(0x02, 0x03, 0x04, 0x05, 0x06, 0x0c, 0x13, 0x17, 0x18, 0x80),
        fc.integer({ min: 0, max: 0xff }),
      ),
      content: fc.uint8Array({ maxLength: 40 }),
    }),
    fc.record({
      tag: fc.oneof(
        fc.constantFrom(0x30, 0x31, 0xa0, 0xa3, 0xa4, 0x24),
        fc.integer({ min: 0, max: 0xff }).map((t) => t | 0x20),
      ),
      children: fc.array(tie('node'), { maxLength: 5 }),
      indefinite: fc.boolean(),
    }),
  ),
})).node;

// ---------------------------------------------------------------------------------------------------------------
// Seeds: real CMS

const DAY = 86_400_000;

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'pipe' });
}

describe('the DER reader refuses malformed input cleanly (fast-check)', () => {
  let root: KeyAndCertificate;
  let signer: KeyAndCertificate;
  const seeds: Buffer[] = [];
  const seedNames: string[] = [];
  let dir: string;

  beforeAll(async () => {
    root = createRootCa('Fuzz Root CA', 'Esign Fuzz');
    signer = issueSigningCertificate(
      root,
      { commonName: 'Fuzz Signer', country: 'IN' },
      { notBefore: new Date(Date.now() - DAY), notAfter: new Date(Date.now() + 30 * DAY) },
    );
    seeds.push(
      Buffer.from(
        await signDetachedCms(content, {
          privateKeyPem: signer.privateKeyPem,
          certificatePem: signer.certificatePem,
          chainPems: [root.certificatePem],
        }),
      ),
    );
    seedNames.push('signDetachedCms');
    dir = mkdtempSync(path.join(os.tmpdir(), 'der-fuzz-'));
    if (!hasOpenssl) {
      console.warn('openssl is not installed: only the service’s own CMS is mutated');
      return;
    }
    const file = (name: string) => path.join(dir, name);
    writeFileSync(file('key.pem'), signer.privateKeyPem);
    writeFileSync(file('cert.pem'), signer.certificatePem);
    writeFileSync(file('root.pem'), root.certificatePem);
    writeFileSync(file('content'), content);
    openssl(
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=Fuzz EC Signer'].concat([
        '-days',
        '2',
        '-keyout',
        file('ec-key.pem'),
        '-out',
        file('ec-cert.pem'),
      ]),
    );
    const sign = (name: string, extra: string[], key = 'key.pem', cert = 'cert.pem') => {
      openssl(
        ['cms', '-sign', '-binary', '-in', file('content'), '-signer', file(cert), '-inkey', file(key)].concat([
          '-outform',
          'DER',
          '-out',
          file(name),
          ...extra,
        ]),
      );
      seeds.push(readFileSync(file(name)));
      seedNames.push(`openssl ${name}`);
    };
    sign('cades.der', ['-cades', '-certfile', file('root.pem')]); // DER, signing-time, SMIMECapabilities
    sign('stream.ber', ['-cades', '-stream']); // BER, indefinite lengths
    sign('keyid.der', ['-keyid', '-md', 'sha512']); // sid = subjectKeyIdentifier
    sign('ec.der', ['-md', 'sha384'], 'ec-key.pem', 'ec-cert.pem'); // ECDSA
  });

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    console.info(`DER fuzzing: ${cases} inputs parsed; the slowest parse took ${slowest.toFixed(1)} ms`);
  });

  it('reads every seed, and verifies the ones it can (RSA, signing-certificate-v2)', async () => {
    for (const [index, seed] of seeds.entries()) {
      const parsed = parseSignedData(seed);
      expectViewsOfInput(parsed, seed);
      const verified = await verifyDetachedCms(seed, content, { trustedRootsPem: [root.certificatePem] });
      expect(verified.digestValid, seedNames[index]).toBe(true);
      if (['signDetachedCms', 'openssl cades.der', 'openssl stream.ber'].includes(seedNames[index]!))
        expect(verified.problems, seedNames[index]).toEqual([]);
      await checkCms(seed);
    }
    if (hasOpenssl) expect(seeds[2]![1]).toBe(0x80); // the streamed one does use indefinite lengths
  });

  it('(a) arbitrary bytes, 0 to 4 KB: returns or throws DerError, nothing else', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 4096, size: 'max' }), (bytes) => checkCms(bytes)),
      { numRuns: runs(1500) },
    );
    // Mostly short, and starting like a ContentInfo, to get past the first bytes.
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 64 }), fc.constantFrom(0x30, 0xa0, 0x31), (bytes, tag) =>
        checkCms(Buffer.concat([Buffer.from([tag]), bytes])),
      ),
      { numRuns: runs(1500) },
    );
  });

  it('(a) random DER-shaped trees: returns or throws DerError', async () => {
    await fc.assert(
      fc.asyncProperty(randomTree, (tree) => checkCms(encode(tree))),
      { numRuns: runs(1500) },
    );
  });

  it('(b) mutations of real CMS: returns or throws DerError; verifyDetachedCms never throws', async () => {
    await fc.assert(
      fc.asyncProperty(mutation, fc.boolean(), (edits, withRoots) =>
        checkCms(mutate(seeds, edits), withRoots ? [root.certificatePem] : undefined),
      ),
      { numRuns: runs(4000) },
    );
  });

  it('(c) thousands of nested SEQUENCE headers: refused past the depth bound, without a stack overflow', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5000 }),
        fc.boolean(),
        fc.constantFrom('empty', 'seed', 'unterminated'),
        async (depth, indefinite, inner) => {
          let bytes = wrap(inner === 'seed' ? seeds[0]! : Buffer.from([0x05, 0x00]), depth, indefinite);
          if (inner === 'unterminated') bytes = bytes.subarray(0, bytes.length - 1);
          await checkCms(bytes);
          const outcome = cleanly('walking the DER tree', bytes, () => walk(bytes));
          if (depth > MAX_DER_DEPTH) {
            expect(outcome).toBeInstanceOf(DerError);
            expect((outcome as DerError).message).toMatch(/nested more than|truncated/);
          }
        },
      ),
      { numRuns: runs(150) },
    );
  });

  it('(c) large adversarial inputs (a megabyte of elements, indefinite nesting, a megabyte OID) are refused cleanly', () => {
    const megabyte = 1 << 20;
    const elements = Buffer.alloc(megabyte, Buffer.from([0x04, 0x00]));
    const flat = Buffer.concat([Buffer.from([0x30, 0x84, 0, 0x10, 0, 0]), elements]);
    const deepIndefinite = Buffer.concat([
      Buffer.alloc(2 * MAX_DER_DEPTH, Buffer.from([0x30, 0x80])),
      elements,
      Buffer.alloc(2 * MAX_DER_DEPTH),
    ]);
    const longOid = Buffer.concat([
      Buffer.from([0x30, 0x84, 0, 0x10, 0, 6, 0x06, 0x84, 0, 0x10, 0, 0]),
      Buffer.alloc(megabyte, 0x81),
    ]);
    longOid[longOid.length - 1] = 0x01;
    const refusal = (read: () => unknown) => {
      try {
        read();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    for (const bytes of [flat, deepIndefinite, longOid]) {
      expect(refusal(() => parseSignedData(bytes))).toBeInstanceOf(DerError);
      // The deepest path a reader can take: the first element of each level, down to the (too many) elements.
      const deepest = () => {
        for (let tlv = readRoot(bytes); ; tlv = children(bytes, tlv)[0]!) if (tlv.tag === 0x06) return readOid(bytes, tlv);
      };
      expect(refusal(deepest)).toBeInstanceOf(DerError);
    }
  });

  it('(d) a huge declared length is refused before anything is allocated', () => {
    const inputs = [
      [0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0],
      [0x04, 0x84, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4],
      [0x30, 0x08, 0xa0, 0x84, 0x7f, 0xff, 0xff, 0xff, 0, 0],
      [0x30, 0x80, 0x04, 0x84, 0xff, 0xff, 0xff, 0xfe, 0, 0],
      [0x30, 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    ].map((bytes) => own(Buffer.from(bytes)));
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 200; i++) {
      for (const bytes of inputs) {
        const { result, largest } = largestAllocation(bytes, () =>
          cleanly('parseSignedData', bytes, () => parseSignedData(bytes)),
        );
        expect(result).toBeInstanceOf(DerError);
        expect(largest).toBe(0);
        expect(cleanly('walking the DER tree', bytes, () => walk(bytes))).toBeInstanceOf(DerError);
      }
    }
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(1 << 20);
  });

  describe('bugs found on the way: the first by the fuzzer, the others by reading the reader (each failed before its fix)', () => {
    it('a carried signer certificate whose public key does not decode: a problem, not "decode error" thrown', async () => {
      // Every RSA SubjectPublicKeyInfo: the RSAPublicKey SEQUENCE inside the BIT STRING becomes a SET. OpenSSL
      // still parses the certificate; only X509Certificate.publicKey throws.
      const spki = Buffer.from('300d06092a864886f70d0101010500038201' + '0f0030', 'hex');
      const cms = Buffer.from(seeds[0]!);
      let found = 0;
      for (let at = cms.indexOf(spki); at >= 0; at = cms.indexOf(spki, at + 1), found++) cms[at + spki.length - 1] = 0x31;
      expect(found).toBe(2); // the signer and the root
      for (const roots of [undefined, [root.certificatePem]]) {
        const verified = await verifyDetachedCms(cms, content, { trustedRootsPem: roots });
        expect(verified.signatureValid).toBe(false);
        expect(verified.problems).toContain('the public key of the signer certificate does not decode');
      }
    });

    it('a carried "certificate" that is PEM text inside a SEQUENCE is refused, not read as another certificate', async () => {
      // Node's X509Certificate tries PEM first, anywhere in the buffer: this SEQUENCE became the signer's
      // certificate, and the CMS verified, while every other verifier sees bytes that are no certificate at all.
      const tree = toTree(seeds[0]!);
      const signedData = tree.children![1]!.children![0]!;
      const certificateSet = signedData.children!.find((child, index) => index > 2 && child.tag === 0xa0)!;
      certificateSet.children = [
        { tag: 0x30, content: Buffer.from(`\n${signer.certificatePem}`, 'latin1') },
        { tag: 0x30, content: Buffer.from(`\n${root.certificatePem}`, 'latin1') },
      ];
      const verified = await verifyDetachedCms(encode(tree), content);
      expect(verified.signatureValid).toBe(false);
      expect(verified.problems).toEqual(['malformed CMS: a carried certificate holds PEM text']);
    });

    it('a time with a field out of range is refused, not rolled over (31 February, month 13, hour 24)', () => {
      const time = (tag: number, text: string) => Buffer.concat([Buffer.from([tag, text.length]), Buffer.from(text, 'latin1')]);
      for (const text of ['260231120000Z', '261301000000Z', '260101240000Z', '260101126000Z'])
        expect(() => readTime(time(0x17, text))).toThrow(DerError);
      expect(readTime(time(0x17, '260228235959Z')).toISOString()).toBe('2026-02-28T23:59:59.000Z');
      expect(readTime(time(0x18, '00500101000000Z')).getUTCFullYear()).toBe(50); // not 1950
    });

    it('an OBJECT IDENTIFIER is read exactly (a 2.25 UUID arc) and only in its one DER encoding', () => {
      const uuid = 329800735698586629295641978511506172918n;
      const arc: number[] = [];
      for (let rest = uuid; rest > 0n; rest /= 128n) arc.unshift(Number(rest % 128n) | (arc.length ? 0x80 : 0));
      const encoded = Buffer.from([0x06, 1 + arc.length, 2 * 40 + 25, ...arc]);
      expect(readOid(encoded, readRoot(encoded))).toBe(`2.25.${uuid}`);
      const padded = Buffer.from([0x06, 0x04, 0x2a, 0x80, 0x80, 0x01]); // 1.2.1 with a padded last arc
      expect(() => readOid(padded, readRoot(padded))).toThrow(DerError);
    });
  });

  it('verifyPdfSignatures (GET /api/v1/esign/verify) reports a mutated CMS in a signed PDF, never throws', async () => {
    const pdf = await signedPdf(seeds[0]!.length);
    const valid = await verifyPdfSignatures(pdf.withContents(seeds[0]!));
    expect(valid.signatures).toHaveLength(1);
    expect(valid.signatures[0]).toMatchObject({ byte_range_valid: true, covers_whole_document: true });

    await fc.assert(
      fc.asyncProperty(mutation, async (edits) => {
        cases++;
        const report = await verifyPdfSignatures(pdf.withContents(mutate(seeds, edits)));
        expect(report.signatures).toHaveLength(1);
        expect(report.signatures[0]!.byte_range_valid).toBe(true);
      }),
      { numRuns: runs(150) },
    );

    /**
     * A one-page PDF with a signature field whose /Contents has room for `capacity` bytes of CMS; `withContents`
     * writes a CMS into it (cut to the room there is), as a signer would, and the ByteRange covers the rest.
     */
    async function signedPdf(capacity: number) {
      const room = capacity + 8192;
      const doc = await PDFDocument.create();
      doc.addPage([200, 200]);
      const context = doc.context;
      const signature = context.obj({
        Type: 'Sig',
        Filter: 'Adobe.PPKLite',
        SubFilter: 'ETSI.CAdES.detached',
        ByteRange: [1111111111, 2222222222, 3333333333, 4444444444],
        Contents: PDFHexString.of('0'.repeat(2 * room)),
        M: PDFString.of('D:20260101000000Z'),
      });
      const field = context.obj({ FT: 'Sig', T: PDFString.of('Fuzzed'), V: context.register(signature), F: PDFNumber.of(132) });
      doc.catalog.set(PDFName.of('AcroForm'), context.obj({ Fields: [context.register(field)], SigFlags: 3 }));
      const bytes = Buffer.from(await doc.save({ useObjectStreams: false }));
      const start = bytes.indexOf(`<${'0'.repeat(2 * room)}>`, 0, 'latin1');
      const end = start + 2 * room + 2;
      const range = [0, start, end, bytes.length - end].map((n) => String(n).padStart(10, '0'));
      const placeholder = bytes.indexOf('1111111111 2222222222 3333333333 4444444444', 0, 'latin1');
      bytes.write(range.join(' '), placeholder, 'latin1');
      return {
        withContents(cms: Buffer): Buffer {
          const copy = Buffer.from(bytes);
          copy.write(cms.subarray(0, room).toString('hex'), start + 1, 'latin1');
          return copy;
        },
      };
    }
  });
});
