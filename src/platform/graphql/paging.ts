import { ArgsType, Field, Int } from 'type-graphql';
import { AppError } from '../errors';

export const MAX_PAGE_SIZE = 100;

/** `page` counts from 1; `size` is 1..100. The same rule for every list of the service. */
@ArgsType()
export class PageArgs {
  @Field(() => Int, { description: 'Page number, starting at 1.' })
  page!: number;

  @Field(() => Int, { description: `Items per page, 1 to ${MAX_PAGE_SIZE}.` })
  size!: number;
}

export function checkPage(args: { page: number; size: number }): { offset: number; limit: number } {
  const errors = [];
  if (!Number.isInteger(args.page) || args.page < 1)
    errors.push({ field: 'page', problem: 'must be a whole number of at least 1' });
  if (!Number.isInteger(args.size) || args.size < 1 || args.size > MAX_PAGE_SIZE) {
    errors.push({ field: 'size', problem: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` });
  }
  if (errors.length > 0) throw AppError.badRequest(errors);
  return { offset: (args.page - 1) * args.size, limit: args.size };
}

/** Fetches one row more than asked to know whether another page exists, without a count query. */
export function pageOf<T>(rows: T[], limit: number): { items: T[]; has_next: boolean } {
  return { items: rows.slice(0, limit), has_next: rows.length > limit };
}
