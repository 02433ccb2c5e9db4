import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
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

/**
 * Libraries write to the console themselves (pdf-lib's parser warnings, graphql-ws's error dumps with their
 * stacks). Routed here, each such call becomes one JSON line marked `source: "console"`, so stdout carries
 * JSON lines only; an Error among the arguments is logged as `err` with its stack.
 */
export function routeConsoleToLogger(log: Logger): void {
  const consoleLog = log.child({ source: 'console' });
  const to =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void => {
      const err = args.find((arg) => arg instanceof Error);
      const message = format(...args.filter((arg) => arg !== err));
      if (err) consoleLog[level]({ err }, message);
      else consoleLog[level](message);
    };
  console.log = to('info');
  console.info = to('info');
  console.warn = to('warn');
  console.error = to('error');
  console.debug = to('debug');
  console.trace = to('debug');
}
