import { PDFArray, PDFDict, PDFName } from 'pdf-lib';
import { updateIncrementally } from './incremental-update';

export interface ValidationData {
  /** DER certificates: every chain of every signature and time-stamp, roots included. */
  certificates: Uint8Array[];
  /** DER OCSPResponses. */
  ocsps: Uint8Array[];
  /** DER CRLs. */
  crls: Uint8Array[];
}

/**
 * PAdES B-LT: the Document Security Store (ETSI EN 319 142-1 5.4, ISO 32000-2 12.8.4.3) appended as an incremental
 * update: /Certs, /OCSPs and /CRLs of the catalog's /DSS, one stream each (Flate). An existing /DSS keeps what it
 * holds and gains the new entries. What a verifier needs to check every signature years later, offline.
 */
export async function appendValidationData(pdf: Uint8Array, data: ValidationData): Promise<Buffer> {
  const { updated } = await updateIncrementally(pdf, (doc) => {
    const context = doc.context;
    let dss = doc.catalog.lookupMaybe(PDFName.of('DSS'), PDFDict);
    if (!dss) {
      dss = context.obj({ Type: 'DSS' });
      doc.catalog.set(PDFName.of('DSS'), context.register(dss));
    }
    for (const [key, items] of [
      ['Certs', data.certificates],
      ['OCSPs', data.ocsps],
      ['CRLs', data.crls],
    ] as const) {
      if (items.length === 0) continue;
      let list = dss.lookupMaybe(PDFName.of(key), PDFArray);
      if (!list) {
        list = context.obj([]);
        dss.set(PDFName.of(key), context.register(list));
      }
      for (const item of items) list.push(context.register(context.flateStream(item)));
    }
  });
  return updated;
}
