import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * A state or union territory where stamps can be procured, by the two-letter code of its e-stamp certificates:
 * the ISO 3166-2:IN code, except Telangana (TG, where ISO has TS). See docs/stamp-reference-data.md.
 */
@Entity({ tableName: 'stamp_states' })
export class StampState {
  @PrimaryKey({ type: 'string', length: 4 })
  code!: string;

  @Property({ type: 'string', length: 100 })
  name!: string;
}

/** An article of a state's stamp act schedule (the kind of instrument the stamp is for). */
@Entity({ tableName: 'stamp_articles' })
export class StampArticle {
  @PrimaryKey({ type: 'string', length: 100 })
  id!: string;

  @ManyToOne(() => StampState, { fieldName: 'state_code' })
  @Index()
  state!: StampState;

  @Property({ type: 'string', length: 200 })
  name!: string;

  @Property({ type: 'string', length: 500 })
  description!: string;
}
