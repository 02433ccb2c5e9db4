import { Entity, PrimaryKey, Property, Unique, type Opt } from '@mikro-orm/core';
import { newId } from '../../platform/ids';

@Entity({ tableName: 'users' })
export class User {
  @PrimaryKey({ type: 'string', length: 64 })
  id: string = newId('user');

  @Property({ type: 'string', length: 320 })
  @Unique()
  email!: string;

  @Property({ type: 'datetime', defaultRaw: 'now()' })
  createdAt: Opt<Date> = new Date();
}
