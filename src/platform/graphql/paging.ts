import { ArgsType, Field, Int } from 'type-graphql';
import { AppError } from '../errors';

export const MAX_PAGE_SIZE = 100;

export const DEFAULT_PAGE_SIZE = 20;

/**
 * `page` counts from 1; `size` is 1..100. The same rule for every list of the service; the lists this
 * service added default to the first page of 20 (nullable with a default, so SOFA's REST route may omit them).
 */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { nullable: true, defaultValue: 1, description: 'Page number, starting at 1 (default 1).' })
  page!: number;

  @Field(() => Int, {
    nullable: true,
    defaultValue: DEFAULT_PAGE_SIZE,
    description: `Items per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`,
  })
  size!: number;
}

/** The contract's `stamps/list` names `page` and `size` as required: leaving one out is `400 missing_fields`. */
@ArgsType()
export class RequiredPageArgs {
  @Field(() => Int, { description: 'Page number, starting at 1.' })
  page!: number;

  @Field(() => Int, { description: `Items per page, 1 to ${MAX_PAGE_SIZE}.` })
  size!: number;
}

/**
 * A nested list GraphQL clients may page (an order's stamps, a template's sessions): `page` and `size`, or
 * neither for the whole list. Nested arguments are GraphQL's only (REST's schema drops them).
 */
@ArgsType()
export class NestedPageArgs {
  @Field(() => Int, { nullable: true, description: 'GraphQL only: page number from 1 (with size).' })
  page?: number | null;

  @Field(() => Int, { nullable: true, description: `GraphQL only: items per page, 1 to ${MAX_PAGE_SIZE}.` })
  size?: number | null;
}

/** The rows a nested page asks for; without `page` and `size`, the first `whole` of them. */
export function windowOf(args: NestedPageArgs, whole: number): { offset: number; limit: number } {
  return args.page == null && args.size == null ? { offset: 0, limit: whole } : checkPage(args);
}

export function checkPage(args: { page?: number | null; size?: number | null }): { offset: number; limit: number } {
  // An explicit null means the same as leaving the argument out.
  const page = args.page ?? 1;
  const size = args.size ?? DEFAULT_PAGE_SIZE;
  const errors = [];
  if (!Number.isInteger(page) || page < 1) errors.push({ field: 'page', problem: 'must be a whole number of at least 1' });
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE) {
    errors.push({ field: 'size', problem: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` });
  }
  if (errors.length > 0) throw AppError.badRequest(errors);
  return { offset: (page - 1) * size, limit: size };
}

/** Fetches one row more than asked to know whether another page exists, without a count query. */
export function pageOf<T>(rows: T[], limit: number): { items: T[]; has_next: boolean } {
  return { items: rows.slice(0, limit), has_next: rows.length > limit };
}
