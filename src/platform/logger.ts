import { AsyncLocalStorage } from 'node:async_hooks';
import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

interface LogScope {
  req_id: string;
}

/** Carries the request id through every await, so each log line of a request names it. */
export const logScope = new AsyncLocalStorage<LogScope>();

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'esign-estamp' },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => {
        const scope = logScope.getStore();
        return scope ? { req_id: scope.req_id } : {};
      },
      // Credentials must never reach the logs, whatever object carries them.
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', '*.token', '*.password', 'token', 'password', 'authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
