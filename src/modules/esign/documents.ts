import type { EntityManager } from '@mikro-orm/postgresql';
import type { AppServices } from '../../platform/services';
import { storeBytes, type StoredFile } from '../files';
import { documentOf, type StoredElement } from './elements/stored-element';
import { EsignDocument, type EsignSession } from './esign-session.entity';

/**
 * The envelope: a session's documents in order (position 0 is the contract's `file_id`). Which documents a signer
 * signs, where their elements fall, and the one writer of a document's current PDF.
 */

/** The session's documents, in the order signers see them. */
export function documentsOf(em: EntityManager, session: Pick<EsignSession, 'id'>): Promise<EsignDocument[]> {
  return em.find(EsignDocument, { session: session.id }, { orderBy: { position: 'asc' } });
}

/** Stamp pages in front of the document at `position` (only the stamped document has any). */
export function stampShiftOf(session: StampPlacement, position: number): number {
  return session.stampDocument === position ? session.stampPageCount : 0;
}

/** Where the stamp pages went: how many, in front of which document. */
export type StampPlacement = Pick<EsignSession, 'stampDocument' | 'stampPageCount'>;

/** An element's page in its document's current PDF (stamp pages come first in the stamped one). */
export function currentPageOf(element: StoredElement, stamps: StampPlacement): number {
  return element.page + stampShiftOf(stamps, documentOf(element));
}

/** The elements on the document at `position`. */
export function elementsOn(elements: StoredElement[], position: number): StoredElement[] {
  return elements.filter((element) => documentOf(element) === position);
}

/**
 * The positions of the documents a signer signs: each that carries one of their elements; a signer with no element
 * (an invisible signature) signs every document, so nobody's approval covers less than the envelope.
 */
export function documentsSignedBy(signer: { elements: StoredElement[] }, documentCount: number): number[] {
  if (signer.elements.length === 0) return Array.from({ length: documentCount }, (_, position) => position);
  return [...new Set(signer.elements.map(documentOf))].sort((a, b) => a - b);
}

/** A document's new current PDF; the first document's is copied onto the session row (EsignSession.currentPdfFile). */
export function setCurrentPdf(session: EsignSession, document: EsignDocument, file: StoredFile): void {
  document.currentPdfFile = file;
  if (document.position === 0) session.currentPdfFile = file;
}

/**
 * A new revision of a document (its preparation, a signature): the bytes stored as the owner's PDF under the
 * document's name, with the page count of the PDF it follows, and made the document's current PDF.
 */
export async function storeRevision(
  services: AppServices,
  tx: EntityManager,
  at: { session: EsignSession; document: EsignDocument; pageCount: number | undefined },
  bytes: Uint8Array,
): Promise<StoredFile> {
  const { session, document, pageCount } = at;
  const file = await storeBytes(
    services.blobs,
    tx,
    { ownerId: session.user.id, kind: 'pdf', name: document.name, mime: 'application/pdf', pageCount },
    bytes,
  );
  setCurrentPdf(session, document, file);
  return file;
}

export interface DocumentSummary {
  document_id: string;
  position: number;
  name: string;
  file_id: string;
  current_pdf_file_id: string;
}

/** How webhooks and the audit trail name a document. */
export function documentSummary(document: EsignDocument): DocumentSummary {
  return {
    document_id: document.id,
    position: document.position,
    name: document.name,
    file_id: document.file.id,
    current_pdf_file_id: document.currentPdfFile.id,
  };
}
