import { z } from 'zod';
import { AppError, type ErrorCode, type FieldProblem } from '../errors';

/** Field checks every module's use cases share: problems are collected, then answered at once. */

/** Collects every problem of a request before answering, so an integrator fixes them in one round. */
export class Problems {
  readonly missing: string[] = [];
  readonly invalid: FieldProblem[] = [];
  signType = false;
  fileId = false;

  missingField(field: string): void {
    this.missing.push(field);
  }

  invalidField(field: string, problem: string): void {
    this.invalid.push({ field, problem });
  }

  /**
   * missing_fields before invalid_sign_type before invalid_file_id before bad_request, unless the operation
   * documents one code for every failure; `errors` lists them all either way.
   */
  toError(only?: ErrorCode): AppError | undefined {
    if (this.missing.length === 0 && this.invalid.length === 0) return undefined;
    const code: ErrorCode =
      only ??
      (this.missing.length
        ? 'missing_fields'
        : this.signType
          ? 'invalid_sign_type'
          : this.fileId
            ? 'invalid_file_id'
            : 'bad_request');
    return new AppError(code, {
      errors: [...this.missing.map((field) => ({ field, problem: 'required' })), ...this.invalid],
    });
  }
}

export const emailSchema = z.email().max(320);
export const isAbsent = (value: unknown) =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '');

export function text(
  problems: Problems,
  field: string,
  value: string | null | undefined,
  max: number,
  required = false,
): string | undefined {
  if (isAbsent(value)) {
    if (required) problems.missingField(field);
    return undefined;
  }
  const trimmed = value!.trim();
  if (trimmed.length > max) problems.invalidField(field, `at most ${max} characters`);
  return trimmed;
}

export function wholeNumber(
  problems: Problems,
  field: string,
  value: number | null | undefined,
  range: { min: number; max: number },
): number | undefined {
  if (isAbsent(value)) return undefined;
  if (!Number.isInteger(value) || value! < range.min || value! > range.max) {
    problems.invalidField(field, `must be a whole number from ${range.min} to ${range.max}`);
    return undefined;
  }
  return value!;
}

export function oneOf<const T extends string | number>(
  problems: Problems,
  field: string,
  value: unknown,
  allowed: readonly T[],
): T | undefined {
  if (isAbsent(value)) return undefined;
  if (!allowed.includes(value as T)) {
    problems.invalidField(field, `must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value as T;
}

export function absoluteHttpUrl(problems: Problems, field: string, value: string | null | undefined): string | undefined {
  const given = text(problems, field, value, 2048);
  if (given === undefined) return undefined;
  try {
    const url = new URL(given);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString();
  } catch {
    // refused below
  }
  problems.invalidField(field, 'must be an absolute http(s) URL');
  return undefined;
}
