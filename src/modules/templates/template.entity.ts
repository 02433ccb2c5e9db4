import { Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import type { Language } from '../../platform/i18n';
import type { SignType, StoredElement } from '../esign';
import { StoredFile } from '../files';
import { User } from '../users';

/** A saved signer layout: defaults (null where the template leaves them to the session) and placed elements. */
export interface TemplateSignerBlueprint {
  sign_type: SignType | null;
  auth_mode: number | null;
  max_retry: number | null;
  pfx_id: string | null;
  reason: string | null;
  verify_email: boolean | null;
  verify_mobile: boolean | null;
  accept_virtual_sign: boolean | null;
  verify_location: boolean | null;
  location_source: 'device' | 'ip' | null;
  /** The signer's language (added later: absent in templates saved before it, read as null). */
  language?: Language | null;
  enforce_geofence: boolean | null;
  latitude: number | null;
  longitude: number | null;
  radius: number | null;
  elements: StoredElement[];
}

/** One document of a template, as stored: the caller's PDF and the name the sessions started from it give it. */
export interface TemplateDocumentRecord {
  file_id: string;
  name: string;
}

/**
 * Ordered documents (one, the contract's `file`, or several: an envelope) plus an ordered list of signer
 * blueprints. Each update bumps `version`; sessions record the version they were started from and keep their own
 * copy of everything, so later edits never reach them. Deleting only hides the template (`deletedAt`): sessions
 * started from it still name it.
 */
@Entity({ tableName: 'templates' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
export class Template {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('template');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 200 })
  name!: string;

  /** The first document's PDF: what the contract's `file_id` answers. */
  @ManyToOne(() => StoredFile)
  file!: StoredFile;

  /** In the order signers see them; the first is `file`. Elements name one by its index (`document`). */
  @Property({ type: 'json' })
  documents!: TemplateDocumentRecord[];

  @Property({ type: 'string', length: 200, nullable: true })
  folder?: string;

  @Property({ type: 'integer', default: 1 })
  version: Opt<number> = 1;

  @Property({ type: 'json' })
  signers!: TemplateSignerBlueprint[];

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  updatedAt: Opt<Date> = new Date();

  @Property({ type: 'datetime', nullable: true })
  deletedAt?: Date;
}
