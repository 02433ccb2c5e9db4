/**
 * A tiny PDF signer of the tests' own, independent of the service's code: it stands for "another tool" (a DSC
 * token's software, a certifying author). It writes its own incremental update (a signature field, a /Sig
 * dictionary with a /Contents placeholder, a cross-reference table or stream, a trailer chained with /Prev),
 * computes the ByteRange, and has OpenSSL make the detached CMS over it (`openssl cms -sign -binary`). pdf-lib is
 * used to read the document (where the catalog and the first page are) and to print the dictionaries it changes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRef, type PDFObject } from 'pdf-lib';

export interface ExternalIdentity {
  commonName: string;
  certificatePem: string;
  /** Removes the key files. */
  dispose(): void;
  sign(content: Buffer): Buffer;
}

/**
 * A self-signed RSA certificate and key made by OpenSSL, and a detached CMS signer with them. `issued`: sign with this
 * key and certificate instead, and carry `extraCertificatesPem` in every CMS too (openssl cms -certfile).
 */
export function externalIdentity(
  commonName = 'Other Tool Signer',
  issued?: { keyPem: string; certificatePem: string; extraCertificatesPem?: string },
): ExternalIdentity {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'external-signer-'));
  const key = path.join(dir, 'key.pem');
  const certificate = path.join(dir, 'cert.pem');
  const extra = path.join(dir, 'extra.pem');
  if (issued) {
    writeFileSync(key, issued.keyPem);
    writeFileSync(certificate, issued.certificatePem);
    if (issued.extraCertificatesPem) writeFileSync(extra, issued.extraCertificatesPem);
  } else
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        `/CN=${commonName}`,
        '-keyout',
        key,
        '-out',
        certificate,
      ],
      { stdio: 'pipe' },
    );
  let counter = 0;
  return {
    commonName,
    certificatePem: readFileSync(certificate, 'utf8'),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
    sign(content) {
      const input = path.join(dir, `content-${counter++}.bin`);
      writeFileSync(input, content);
      try {
        // Detached (no -nodetach): the CMS carries no content, the PDF's ByteRange is the content.
        return execFileSync(
          'openssl',
          [
            'cms',
            '-sign',
            '-binary',
            '-md',
            'sha256',
            '-outform',
            'DER',
            '-nosmimecap',
            '-signer',
            certificate,
            '-inkey',
            key,
            ...(issued?.extraCertificatesPem ? ['-certfile', extra] : []),
            '-in',
            input,
          ],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
      } finally {
        rmSync(input, { force: true });
      }
    },
  };
}

export interface ExternalSignOptions {
  /** The field's /T. */
  fieldName?: string;
  /** A certification signature (catalog /Perms /DocMDP) with these permissions (/P; 'no-P': the entry left out). */
  certify?: 1 | 2 | 3 | 'no-P';
  /** The kind of cross-reference section the update ends with; by default the kind of the previous one. */
  xref?: 'table' | 'stream';
  /** Room for the CMS, in bytes (8192 by default: one certificate and the signature). */
  contentsBytes?: number;
}

const CONTENTS_BYTES = 8192;

const BYTE_RANGE_PLACEHOLDER = '/ByteRange [0 0000000000 0000000000 0000000000]';

/** Signs `pdf` with an invisible signature (a new field on the first page) in one incremental update. */
export async function signExternally(
  pdf: Buffer,
  identity: ExternalIdentity,
  options: ExternalSignOptions = {},
): Promise<Buffer> {
  const fieldName = options.fieldName ?? 'ExternalSignature';
  const contentsBytes = options.contentsBytes ?? CONTENTS_BYTES;
  const doc = await PDFDocument.load(pdf, { updateMetadata: false });
  const context = doc.context;
  const text = pdf.toString('latin1');
  const startxref = Number(/startxref\s+(\d+)\s*%%EOF\s*$/.exec(text.slice(-1024))![1]);
  // Every number in use: what pdf-lib parsed, and every /Size a trailer or xref stream declares.
  const size = Math.max(context.largestObjectNumber + 1, ...[...text.matchAll(/\/Size\s+(\d+)/g)].map((m) => Number(m[1])));
  const sigNumber = size;
  const fieldNumber = size + 1;
  const objects = new Map<number, string>();

  const permissions = options.certify === 'no-P' ? '' : ` /P ${options.certify}`;
  const reference = options.certify
    ? ` /Reference [<< /Type /SigRef /TransformMethod /DocMDP /TransformParams << /Type /TransformParams${permissions} /V /1.2 >> >>]`
    : '';
  objects.set(
    sigNumber,
    `<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /adbe.pkcs7.detached ${BYTE_RANGE_PLACEHOLDER} /Contents <${'0'.repeat(
      contentsBytes * 2,
    )}> /M (D:20260101120000+00'00') /Name (${identity.commonName})${reference} >>`,
  );
  const firstPage = doc.getPages()[0];
  objects.set(
    fieldNumber,
    `<< /Type /Annot /Subtype /Widget /FT /Sig /T (${fieldName}) /V ${sigNumber} 0 R /Rect [0 0 0 0] /F 132 /P ${firstPage.ref.toString()} >>`,
  );
  const fieldRef = PDFRef.of(fieldNumber);

  // The page lists the widget among its annotations.
  const annots = firstPage.node.get(PDFName.of('Annots'));
  if (annots instanceof PDFRef) {
    const array = context.lookup(annots, PDFArray).clone(context);
    array.push(fieldRef);
    objects.set(annots.objectNumber, array.toString());
  } else {
    const page = firstPage.node.clone(context);
    const array = annots instanceof PDFArray ? annots.clone(context) : context.obj([]);
    array.push(fieldRef);
    page.set(PDFName.of('Annots'), array);
    objects.set(firstPage.ref.objectNumber, page.toString());
  }

  // The form lists the field; a certification is named in the catalog's /Perms.
  const rootRef = context.trailerInfo.Root as PDFRef;
  const catalog = context.lookup(rootRef, PDFDict).clone(context);
  const acroForm = catalog.get(PDFName.of('AcroForm'));
  const withField = (form: PDFDict) => {
    const fields = form.lookupMaybe(PDFName.of('Fields'), PDFArray)?.clone(context) ?? context.obj([]);
    fields.push(fieldRef);
    form.set(PDFName.of('Fields'), fields);
    form.set(PDFName.of('SigFlags'), context.obj(3));
    return form;
  };
  if (acroForm instanceof PDFRef) {
    objects.set(acroForm.objectNumber, withField(context.lookup(acroForm, PDFDict).clone(context)).toString());
  } else {
    catalog.set(PDFName.of('AcroForm'), withField(acroForm instanceof PDFDict ? acroForm.clone(context) : context.obj({})));
  }
  if (options.certify) catalog.set(PDFName.of('Perms'), context.obj({ DocMDP: PDFRef.of(sigNumber) }));
  objects.set(rootRef.objectNumber, catalog.toString());

  // The update: the objects, a cross-reference section for them, the trailer.
  const parts = [pdf, Buffer.from('\n')];
  let offset = pdf.length + 1;
  const offsets = new Map<number, number>();
  for (const [number, body] of [...objects].sort(([a], [b]) => a - b)) {
    const chunk = Buffer.from(`${number} 0 obj\n${body}\nendobj\n`, 'latin1');
    offsets.set(number, offset);
    parts.push(chunk);
    offset += chunk.length;
  }
  const trailer = trailerEntries(context.trailerInfo as Record<string, PDFObject | undefined>, startxref);
  const xref = options.xref ?? (/^\s*xref/.test(text.slice(startxref, startxref + 16)) ? 'table' : 'stream');
  if (xref === 'stream') {
    const xrefNumber = fieldNumber + 1;
    offsets.set(xrefNumber, offset);
    const numbers = [...offsets.keys()].sort((a, b) => a - b);
    const rows = Buffer.concat(
      numbers.map((number) => {
        const row = Buffer.alloc(7);
        row[0] = 1;
        row.writeUInt32BE(offsets.get(number)!, 1);
        return row;
      }),
    );
    const index = numbers.flatMap((number) => [number, 1]).join(' ');
    parts.push(
      Buffer.from(
        `${xrefNumber} 0 obj\n<< /Type /XRef /Size ${xrefNumber + 1} /W [1 4 2] /Index [${index}] ${trailer} /Length ${rows.length} >>\nstream\n`,
        'latin1',
      ),
      rows,
      Buffer.from(`\nendstream\nendobj\nstartxref\n${offset}\n%%EOF\n`, 'latin1'),
    );
  } else {
    const entries = [...offsets]
      .sort(([a], [b]) => a - b)
      .map(([number, at]) => `${number} 1\n${String(at).padStart(10, '0')} 00000 n\r`);
    parts.push(
      Buffer.from(
        `xref\n${entries.join('\n')}\ntrailer\n<< /Size ${fieldNumber + 1} ${trailer} >>\nstartxref\n${offset}\n%%EOF\n`,
        'latin1',
      ),
    );
  }
  const updated = Buffer.concat(parts);

  // The ByteRange: everything but the /Contents hex string; then the CMS over those bytes.
  const sigAt = offsets.get(sigNumber)!;
  const contentsAt = updated.indexOf('/Contents <', sigAt, 'latin1') + '/Contents '.length;
  const contentsEnd = contentsAt + contentsBytes * 2 + 2;
  const byteRange = `/ByteRange [0 ${contentsAt} ${contentsEnd} ${updated.length - contentsEnd}]`;
  updated.write(
    byteRange.padEnd(BYTE_RANGE_PLACEHOLDER.length, ' '),
    updated.indexOf(BYTE_RANGE_PLACEHOLDER, sigAt, 'latin1'),
    'latin1',
  );
  const cms = identity.sign(Buffer.concat([updated.subarray(0, contentsAt), updated.subarray(contentsEnd)]));
  if (cms.length > contentsBytes) throw new Error('the CMS does not fit the placeholder');
  updated.write(cms.toString('hex').toUpperCase(), contentsAt + 1, 'latin1');
  return updated;
}

function trailerEntries(info: Record<string, PDFObject | undefined>, previous: number): string {
  return [
    `/Root ${info.Root!.toString()}`,
    ...(info.Info ? [`/Info ${info.Info.toString()}`] : []),
    ...(info.ID ? [`/ID ${info.ID.toString()}`] : []),
    `/Prev ${previous}`,
  ].join(' ');
}

/** The same document with cross-reference streams and object streams, rewritten by qpdf. */
export function withObjectStreams(pdf: Buffer): Buffer {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'objstm-'));
  try {
    const input = path.join(dir, 'in.pdf');
    const output = path.join(dir, 'out.pdf');
    writeFileSync(input, pdf);
    execFileSync('qpdf', ['--object-streams=generate', input, output], { stdio: 'pipe' });
    return readFileSync(output);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
