import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { certificationRefusal, type DocMdpPermissions } from '../../signing';
import type { SessionPlan } from './plan-session';
import { drawsOnPage } from '../elements/pdf-layout';
import { documentOf } from '../elements/stored-element';

/**
 * Refuses a session whose changes a document's certification (DocMDP) forbids: `422 document_certified`. A
 * certification is a signature, and a signature dictionary is never inside an object stream (its /ByteRange must
 * point at its /Contents in the file), so a document without `ByteRange` or `DocMDP` in its bytes is not parsed at
 * all; one with either is read in the worker pool, as every parse of uploaded bytes. Answers the stamped document's
 * bytes, which the stamp step uses again.
 */
export async function refuseForbiddenByCertification(services: AppServices, plan: SessionPlan): Promise<Buffer> {
  let stamped: Buffer | undefined;
  for (const [position, document] of plan.documents.entries()) {
    const bytes = await services.blobs.getBytes(document.file.storageKey);
    if (position === plan.stampDocument) stamped = bytes;
    await refuseForbiddenChanges(services, plan, position, bytes);
  }
  return stamped!;
}

async function refuseForbiddenChanges(services: AppServices, plan: SessionPlan, position: number, bytes: Buffer) {
  if (!bytes.includes('ByteRange', 0, 'latin1') && !bytes.includes('DocMDP', 0, 'latin1')) return;
  const certification = await services.untrusted.run<{ permissions: DocMdpPermissions } | null>('readCertificationTask', bytes);
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
