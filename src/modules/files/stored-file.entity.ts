import { BigIntType, Entity, Index, ManyToOne, PrimaryKey, Property, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';
import { User } from '../users';

export type FileKind = 'pdf' | 'asset';

@Entity({ tableName: 'files' })
@Index({ properties: ['user', 'createdAt', 'seq'] })
export class StoredFile {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('file');

  @ManyToOne(() => User, { deleteRule: 'cascade' })
  user!: User;

  @Property({ type: 'string', length: 8 })
  kind!: FileKind;

  /** The original file name, as the uploader gave it (without any directory part). */
  @Property({ type: 'string', length: 255 })
  name!: string;

  /** Detected from the bytes, never taken from the upload's declared type. */
  @Property({ type: 'string', length: 100 })
  mime!: string;

  @Property({ type: new BigIntType('number') })
  sizeBytes!: number;

  @Property({ type: 'string', length: 64 })
  sha256!: string;

  /** PDFs only. */
  @Property({ type: 'integer', nullable: true })
  pageCount?: number;

  @Property({ type: 'integer', nullable: true })
  widthPx?: number;

  @Property({ type: 'integer', nullable: true })
  heightPx?: number;

  @Property({ type: 'string', length: 300 })
  storageKey!: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();

  /** Insertion order, filled by the database: rows made in one millisecond still list in a stable order. */
  @Property({ type: 'bigint', autoincrement: true })
  seq!: Opt<string>;
}
