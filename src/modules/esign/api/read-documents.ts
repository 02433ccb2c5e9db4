import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../../platform/auth/actor';
import type { AppServices } from '../../../platform/services';
import { documentsOf, documentsSignedBy, documentSummary, elementsOn, stampShiftOf } from '../documents';
import { Signer } from '../esign-session.entity';
import { getOwnSession } from '../session/own-session';
import type { EsignDocumentType } from './document.types';

/** The documents of one of the caller's sessions: each one's files, who signs it and how far they are. */
export async function readOwnDocuments(
  services: AppServices,
  em: EntityManager,
  actor: Actor,
  clientId: string,
): Promise<EsignDocumentType[]> {
  const session = await getOwnSession(services, em, actor, clientId);
  const documents = await documentsOf(em, session);
  const signers = await em.find(Signer, { session }, { orderBy: { position: 'asc' } });
  return documents.map((document) => {
    const signatures = signers
      .filter((signer) => documentsSignedBy(signer, documents.length).includes(document.position))
      .map((signer) => ({
        signer_id: signer.id,
        status: signer.status === 'completed' ? 'completed' : 'pending',
        signed_at: signer.completedAt ?? null,
      }));
    return {
      ...documentSummary(document),
      stamp_page_count: stampShiftOf(session, document.position),
      status: signatures.every((signature) => signature.status === 'completed') ? 'completed' : 'pending',
      signatures,
      field_ids: signers.flatMap((signer) => elementsOn(signer.elements, document.position).map((element) => element.field_id)),
    };
  });
}
