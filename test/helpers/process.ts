import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');
export const MAIN = path.join(ROOT, 'dist/src/main.js');
export const WORKER = path.join(ROOT, 'dist/src/worker.js');

export interface ServiceProcess {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/**
 * Runs the built service (`node dist/src/main.js`) as `npm start` would, or its queue workers alone
 * (`dist/src/worker.js`, as `npm run worker`), with the given environment only.
 */
export function startServiceProcess(env: Record<string, string>, entry: string = MAIN): ServiceProcess {
  const child = spawn(process.execPath, [entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const collect = (into: string[]) => {
    let partial = '';
    return (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        into.push(line);
        for (const waiter of [...waiters]) {
          if (waiter.pattern.test(line)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
    };
  };
  child.stdout!.on('data', collect(stdout));
  child.stderr!.on('data', collect(stderr));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout,
    stderr,
    exited,
    waitForLine(pattern, timeoutMs = 60_000) {
      const seen = [...stdout, ...stderr].find((line) => pattern.test(line));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; stderr: ${stderr.join('\n')}`)),
          timeoutMs,
        );
        waiters.push({
          pattern,
          resolve: (line) => {
            clearTimeout(timer);
            resolve(line);
          },
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`process exited (${code}) before a line matching ${pattern}; stderr: ${stderr.join('\n')}`));
        });
      });
    },
  };
}
