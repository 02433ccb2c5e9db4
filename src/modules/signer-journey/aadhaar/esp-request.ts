import type { EntityManager } from '@mikro-orm/postgresql';
import type { EspConfig } from '../../../config';
import type { AppServices } from '../../../platform/services';
import { documentsOf, type EsignSession, type Signer } from '../../esign/signer-side';
import { buildEspRequest, MAX_INPUT_HASHES, signedRangeDigest } from '../../signing';
import { SIGNER_RETURN_PATH } from '../page/signer-page';
import { signatureUpdates } from '../sign-in-turn';
import type { EspDocumentHash } from './esp-transaction.entity';

/** Where ESPs send responses (`responseUrl`), under PUBLIC_URL; signers come back to SIGNER_RETURN_PATH. */
export const ESP_RESPONSE_PATH = '/esp/response';

/**
 * For each document of the signer's batch (the positions `only` names; one InputHash each, at most MAX_INPUT_HASHES),
 * the signature's incremental update over its current PDF, stored until the ESP answers, and the SHA-256 of its byte
 * range (the InputHash).
 */
export async function prepareSignatures(
  services: AppServices,
  tx: EntityManager,
  session: EsignSession,
  signer: Signer,
  at: { txn: string; now: Date; only: number[] },
): Promise<EspDocumentHash[]> {
  const { txn, now, only } = at;
  if (only.length > MAX_INPUT_HASHES) throw new RangeError(`an ESP signs at most ${MAX_INPUT_HASHES} documents at once`);
  const updates = await signatureUpdates(services, tx, session, signer, now, only);
  const hashes: EspDocumentHash[] = [];
  for (const [index, { document, update }] of updates.entries()) {
    const { updated, contentsAt, contentsEnd } = update;
    const id = String(index + 1);
    const preparedKey = `esp/${txn}-${id}.pdf`;
    await services.blobs.putBytes(preparedKey, updated, 'application/pdf');
    hashes.push({
      id,
      document_id: document.id,
      position: document.position,
      input_hash: signedRangeDigest(update).toString('hex'),
      prepared_key: preparedKey,
      contents_at: contentsAt,
      contents_end: contentsEnd,
      base_file_id: document.currentPdfFile.id,
    });
  }
  return hashes;
}

/** The signed `<Esign>` request for the transaction's InputHashes, with the addresses the ESP answers and returns to. */
export async function requestForEsp(
  services: AppServices,
  tx: EntityManager,
  esp: EspConfig,
  at: { session: EsignSession; signer: Signer; txn: string; documents: EspDocumentHash[] },
) {
  const { session, signer, txn } = at;
  const names = new Map((await documentsOf(tx, session)).map((document) => [document.id, document.name]));
  return buildEspRequest(services, tx, esp, {
    txn,
    documents: at.documents.map((document) => {
      const name = names.get(document.document_id) ?? session.filename;
      return {
        id: document.id,
        sha256Hex: document.input_hash,
        docInfo: `${name} (${session.id})`,
        // 3.2: what the ESP may fetch to show the signer: the prepared PDF only, by a signed link that lapses with
        // the transaction (and whose bytes go when it ends).
        docUrl: services.urls.issue(
          { key: document.prepared_key, filename: name, contentType: 'application/pdf' },
          esp.timeoutSeconds,
        ).url,
      };
    }),
    authMode: signer.authMode,
    responseUrl: `${services.config.publicUrl}${ESP_RESPONSE_PATH}/${esp.name}`,
    redirectUrl: `${services.config.publicUrl}${SIGNER_RETURN_PATH}?txn=${txn}`,
  });
}
