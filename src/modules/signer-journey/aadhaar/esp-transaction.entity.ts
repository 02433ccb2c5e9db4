import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import type { RowRef } from '../../../platform/db/row-ref';

/**
 * `held`: the ESP signed this batch of a signer who signs more documents than one transaction carries; its signatures
 * wait, made and time-stamped, for the signer's remaining batches and are recorded with the last one, or not at all.
 */
export type EspTransactionStatus = 'pending' | 'held' | 'completed' | 'failed' | 'expired';

/**
 * One document of a transaction: the `<InputHash>` the request carried for it (`id`, 1 to 5) and the prepared PDF it
 * belongs to, kept until the ESP answers.
 */
export interface EspDocumentHash {
  /** The InputHash id, echoed by the DocSignature that signs it. */
  id: string;
  /** The envelope's document (EsignDocument id and position). */
  document_id: string;
  position: number;
  /** The hex SHA-256 of the prepared signature's byte range: the InputHash. */
  input_hash: string;
  /** The PDF with the signature update appended and its /Contents empty. */
  prepared_key: string;
  contents_at: number;
  contents_end: number;
  /** The document's current PDF the update was built over: if another signature lands first, this one is stale. */
  base_file_id: string;
  /** A held batch: the PDF with the ESP's signature filled in and time-stamped, and that signature (base64 CMS). */
  signed_key?: string;
  cms?: string;
}

/**
 * One eSign transaction of an Aadhaar signer with their ESP (the ASP's record, CCA eSign API): the `txn` the
 * request carried, the hash of each document the ESP is to sign (one `<InputHash>` per document, up to five) and
 * the prepared PDFs they belong to, until the ESP answers or the transaction times out. A response is accepted once,
 * for a pending transaction, before `expiresAt`, and only whole: every document signed, or none recorded. A held batch's
 * `expiresAt` is the time by which the signer's next batch must be answered.
 */
@Entity({ tableName: 'esp_transactions' })
@Index({ properties: ['signer', 'createdAt'] })
export class EspTransaction {
  @PrimaryKey({ type: 'string', length: 64 })
  txn!: string;

  @ManyToOne({ entity: 'EsignSession', deleteRule: 'cascade' })
  session!: RowRef;

  @ManyToOne({ entity: 'Signer', deleteRule: 'cascade' })
  signer!: RowRef;

  @Property({ type: 'string', length: 40 })
  backend!: string;

  /**
   * The signer's token hash when the transaction started: the person the ESP authenticates. A hand-over (reassign,
   * delegate) replaces it, and an answer for the person who left is not recorded under the one who came.
   */
  @Property({ type: 'string', length: 64, nullable: true })
  signerTokenHash?: string;

  /** The documents signed in this transaction, in InputHash order. */
  @Property({ type: 'json' })
  documents!: EspDocumentHash[];

  /**
   * Which of the signer's batches this is (1-based) and how many there are: a signer with more documents than one
   * transaction carries (MAX_INPUT_HASHES) authenticates once per batch, and the batches are recorded together.
   */
  @Property({ type: 'integer', default: 1 })
  batch: Opt<number> = 1;

  @Property({ type: 'integer', default: 1 })
  batchCount: Opt<number> = 1;

  /** The holder's certificate the ESP returned (kept for a held batch: every batch must be the same holder's). */
  @Property({ type: 'text', nullable: true })
  certificatePem?: string;

  /** The signing time the prepared signature names (/M). */
  @Property({ type: 'datetime' })
  signingTime!: Date;

  @Property({ type: 'string', length: 16 })
  status: Opt<EspTransactionStatus> = 'pending';

  @Property({ type: 'string', length: 64, nullable: true })
  errorCode?: string;

  @Property({ type: 'string', length: 500, nullable: true })
  errorMessage?: string;

  /** The ESP's own reference of the transaction (`resCode`). */
  @Property({ type: 'string', length: 100, nullable: true })
  responseCode?: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  @Property({ type: 'datetime' })
  expiresAt!: Date;

  @Property({ type: 'datetime', nullable: true })
  answeredAt?: Date;
}
