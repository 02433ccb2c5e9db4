import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import type { RowRef } from '../../../platform/db/row-ref';

export type DscTransactionStatus = 'pending' | 'completed' | 'failed' | 'expired';

/** One document of a DSC transaction: the prepared signature update and what the signer's token is to sign for it. */
export interface DscDocumentDigest {
  document_id: string;
  position: number;
  /** The PDF with the signature update appended and its /Contents empty. */
  prepared_key: string;
  contents_at: number;
  contents_end: number;
  /** The document's current PDF the update was built over: if another signature lands first, this one is stale. */
  base_file_id: string;
  /** The hex SHA-256 of the prepared signature's byte range: the CMS message-digest. */
  range_digest: string;
  /** The hex SHA-256 of the CMS signed attributes over that digest: what the token signs (dsc-signature.ts). */
  digest: string;
}

/**
 * A DSC signer's signature between its two steps (dsc-signing.ts): the certificate the checks accepted, and for
 * each document the prepared update and the digest the token signs, until the token's signatures come back, the
 * signer starts again, or the transaction times out (DSC_SIGN_TIMEOUT_SECONDS). Accepted once, whole.
 */
@Entity({ tableName: 'dsc_transactions' })
@Index({ properties: ['signer', 'createdAt'] })
export class DscTransaction {
  @PrimaryKey({ type: 'string', length: 64 })
  txn!: string;

  @ManyToOne({ entity: 'EsignSession', deleteRule: 'cascade' })
  session!: RowRef;

  @ManyToOne({ entity: 'Signer', deleteRule: 'cascade' })
  signer!: RowRef;

  /** The person the signer token named at the start: a hand-over since makes the transaction someone else's. */
  @Property({ type: 'string', length: 64 })
  signerTokenHash!: string;

  /** The signer's certificate, as the checks accepted it, and its issuers up to the trust anchor. */
  @Property({ type: 'text' })
  certificatePem!: string;

  @Property({ type: 'json' })
  chainPems!: string[];

  @Property({ type: 'json' })
  documents!: DscDocumentDigest[];

  /** The signing time the prepared signatures name (/M). */
  @Property({ type: 'datetime' })
  signingTime!: Date;

  @Property({ type: 'string', length: 16 })
  status: Opt<DscTransactionStatus> = 'pending';

  @Property({ type: 'string', length: 64, nullable: true })
  errorCode?: string;

  @Property({ type: 'string', length: 500, nullable: true })
  errorMessage?: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'datetime', nullable: true })
  answeredAt?: Date;
}
