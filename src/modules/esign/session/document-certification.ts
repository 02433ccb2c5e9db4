import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { certificationRefusal, type DocMdpPermissions } from '../../signing';
import type { SessionPlan } from './session-plan';
import { drawsOnPage } from '../elements/pdf-layout';
import { documentOf } from '../elements/stored-element';

/** A document's bytes and its certification (null: none), read once per stored file however many plans use it. */
export interface CertificationReader {
  bytes(storageKey: string): Promise<Buffer>;
  certification(storageKey: string): Promise<{ permissions: DocMdpPermissions } | null>;
}

/**
 * A certification is a signature, and a signature dictionary is never inside an object stream (its /ByteRange must
 * point at its /Contents in the file), so a document without `ByteRange` or `DocMDP` in its bytes is not parsed at
 * all; one with either is read in the worker pool, as every parse of uploaded bytes. Stored bytes never change under
 * their key, so each answer stands for the reader's life (a request, a bulk's chunk).
 */
export function certificationReader(services: AppServices): CertificationReader {
  const bytes = new Map<string, Promise<Buffer>>();
  const certifications = new Map<string, Promise<{ permissions: DocMdpPermissions } | null>>();
  const reader: CertificationReader = {
    bytes(storageKey) {
      if (!bytes.has(storageKey)) bytes.set(storageKey, services.blobs.getBytes(storageKey));
      return bytes.get(storageKey)!;
    },
    certification(storageKey) {
      if (!certifications.has(storageKey))
        certifications.set(
          storageKey,
          reader
            .bytes(storageKey)
            .then((document) =>
              document.includes('ByteRange', 0, 'latin1') || document.includes('DocMDP', 0, 'latin1')
                ? services.untrusted.run<{ permissions: DocMdpPermissions } | null>('readCertificationTask', document)
                : null,
            ),
        );
      return certifications.get(storageKey)!;
    },
  };
  return reader;
}

/**
 * Refuses a session whose changes a document's certification (DocMDP) forbids: `422 document_certified`. Answers the
 * stamped document's bytes, which the stamp step uses again.
 */
export async function refuseForbiddenByCertification(
  services: AppServices,
  plan: SessionPlan,
  reader: CertificationReader = certificationReader(services),
): Promise<Buffer> {
  for (const [position, document] of plan.documents.entries()) {
    refuseForbiddenChanges(plan, position, await reader.certification(document.file.storageKey));
  }
  return reader.bytes(plan.documents[plan.stampDocument]!.file.storageKey);
}

function refuseForbiddenChanges(
  plan: SessionPlan,
  position: number,
  certification: { permissions: DocMdpPermissions } | null,
): void {
  if (!certification) return;
  // Owner images are drawn into page content; form fields and signatures are annotations a certification may allow.
  const images = plan.signers.flatMap((signer, index) =>
    signer.elements.flatMap((element, at) =>
      drawsOnPage(element) && documentOf(element) === position ? [`signers[${index}].elements[${at}]`] : [],
    ),
  );
  const stamped = plan.stamp !== null && plan.stampDocument === position;
  // The certificate of completion is appended to the first document.
  const appended = plan.appendCertificate && position === 0;
  const problem = certificationRefusal(certification.permissions, {
    addsPages: stamped,
    drawsOnPages: images.length > 0,
    appendsPages: appended,
  });
  if (problem) {
    const file = plan.documents.length === 1 ? 'file_id' : `documents[${position}].file_id`;
    const field = certification.permissions < 3 ? file : stamped ? 'stamp' : (images[0] ?? 'append_certificate');
    throw new AppError('document_certified', {
      errors: [{ field, problem }],
      details: { docmdp_permissions: certification.permissions },
    });
  }
}
