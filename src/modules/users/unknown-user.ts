import { AppError } from '../../platform/errors';

/**
 * The answer to an operation on a user its input names (admin operations, the CLI's wallet credit) who does not
 * exist: `404 not_found`, the id in `errors`.
 */
export function unknownUser(userId: string): AppError {
  return new AppError('not_found', { errors: [{ field: 'user_id', problem: `no user ${userId}` }] });
}
