import { Field, ObjectType, type ClassType } from 'type-graphql';
import { PageItems } from './operation-limits';

/**
 * The one paged type of the service: one page of `items` (weighed by the operation cost limit as a page) and
 * whether another page follows. Each list names its own: `class FilePageType extends PageOf(FileInfoType) {}`
 * under `@ObjectType('FilePage')`.
 */
export function PageOf<T extends object>(itemType: ClassType<T>) {
  @ObjectType({ simpleResolvers: true })
  abstract class Page {
    @Field(() => [itemType])
    @PageItems()
    items!: T[];

    @Field()
    has_next!: boolean;
  }
  return Page;
}
