/**
 * The service (API or worker) in a process of its own, so that its peak memory is the kernel's figure for that
 * process alone (VmHWM), not the bench process's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface ServiceProcess {
  pid: number;
  /** The last 20 kB of what it wrote on stdout and stderr, for error messages. */
  output(): string;
  /** Resolves with the exit code (or signal) once it has exited. */
  exited: Promise<string>;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const OUTPUT_KEPT = 20_000;

/**
 * `dist-bench/src/<script>` (bench/tsconfig.json compiles src/ there beside bench/) in a fresh Node process
 * with only `env` (plus PATH, HOME and TMPDIR) as its environment.
 */
export function spawnService(script: 'main.js' | 'worker.js', env: Record<string, string>): ServiceProcess {
  const inherited: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR']) if (process.env[name] !== undefined) inherited[name] = process.env[name]!;
  const child: ChildProcess = spawn(process.execPath, [path.resolve(__dirname, '../src', script)], {
    cwd: path.resolve(__dirname, '../..'),
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? `exit code ${code}`));
    child.once('error', (error) => resolve(`spawn error: ${error.message}`));
  });
  if (child.pid === undefined) throw new Error(`could not start ${script}`);
  // Never outlives the bench, however the bench ends.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let done = false;
  void exited.then(() => {
    done = true;
    process.removeListener('exit', killOnExit);
  });
  return {
    pid: child.pid,
    output: () => output,
    exited,
    stop: async (graceMs = 10_000) => {
      if (done) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits until `probe` says yes, failing with `what` after `timeoutMs` or as soon as the process exits. */
export async function waitFor(
  service: ServiceProcess,
  what: string,
  probe: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  let exit: string | undefined;
  void service.exited.then((how) => (exit = how));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await probe()) return;
    if (exit !== undefined) throw new Error(`${what}: the process ended (${exit}) first; its output:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s; its output:\n${service.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A line of /proc/<pid>/status in MB: VmHWM is the peak resident memory, VmRSS the current one. */
export function statusMB(pid: number | 'self', field: 'VmHWM' | 'VmRSS'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  if (!line) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

/** Sets the process's VmHWM back to its current resident memory (Linux clear_refs); false where that is refused. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
