import type { Response } from 'express';
import { AppError, type FieldProblem } from '../errors';

/** The contract's response shape for every JSON answer of /api/v1. */
export interface Envelope<T = unknown> {
  data: T | null;
  status_code: number;
  message: string;
  success: boolean;
  /** Added by this service on failures that concern particular inputs. */
  errors?: FieldProblem[];
}

export function successEnvelope<T>(data: T): Envelope<T> {
  return { data, status_code: 200, message: 'Success', success: true };
}

export function errorEnvelope(error: AppError): Envelope<null> {
  return {
    data: null,
    status_code: error.status,
    message: error.message,
    success: false,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}

export function sendSuccess<T>(res: Response, data: T): void {
  res.status(200).json(successEnvelope(data));
}

export function sendError(res: Response, error: AppError): void {
  if (res.headersSent) return;
  res.status(error.status).json(errorEnvelope(error));
}
