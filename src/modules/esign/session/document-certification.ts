import { AppError } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { certificationRefusal, type DocMdpPermissions } from '../../signing';
import type { SessionPlan } from './plan-session';
import { drawsOnPage } from '../elements/pdf-layout';

/**
 * Refuses a session whose changes the document's certification (DocMDP) forbids: `422 document_certified`. A
 * certification is a signature, and a signature dictionary is never inside an object stream (its /ByteRange must
 * point at its /Contents in the file), so a document without `ByteRange` or `DocMDP` in its bytes is not parsed at
 * all; one with either is read in the worker pool, as every parse of uploaded bytes. Answers the document's bytes,
 * which the stamp step uses again.
 */
export async function refuseForbiddenByCertification(services: AppServices, plan: SessionPlan): Promise<Buffer> {
  const bytes = await services.blobs.getBytes(plan.file.storageKey);
  if (!bytes.includes('ByteRange', 0, 'latin1') && !bytes.includes('DocMDP', 0, 'latin1')) return bytes;
  const certification = await services.untrusted.run<{ permissions: DocMdpPermissions } | null>('readCertificationTask', bytes);
  if (!certification) return bytes;
  // Owner images are drawn into page content; form fields and signatures are annotations a certification may allow.
  const images = plan.signers.flatMap((signer, index) =>
    signer.elements.flatMap((element, at) => (drawsOnPage(element) ? [`signers[${index}].elements[${at}]`] : [])),
  );
  const problem = certificationRefusal(certification.permissions, {
    addsPages: plan.stamp !== null,
    drawsOnPages: images.length > 0,
    appendsPages: plan.appendCertificate,
  });
  if (problem) {
    const field = certification.permissions < 3 ? 'file_id' : plan.stamp ? 'stamp' : (images[0] ?? 'append_certificate');
    throw new AppError('document_certified', {
      errors: [{ field, problem }],
      details: { docmdp_permissions: certification.permissions },
    });
  }
  return bytes;
}
