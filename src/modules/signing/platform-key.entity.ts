import { Entity, PrimaryKey, Property, type Opt } from '@mikro-orm/core';

/** Key material the platform itself holds (its document-signing identity, the sandbox ESP's CA), sealed. */
@Entity({ tableName: 'platform_keys' })
export class PlatformKey {
  @PrimaryKey({ type: 'string', length: 64 })
  name!: string;

  /** Sealed JSON `{privateKeyPem, certificatePem, chainPems}`. */
  @Property({ type: 'text' })
  sealed!: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();
}
