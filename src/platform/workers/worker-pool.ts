import { MessageChannel, type MessagePort } from 'node:worker_threads';
import Piscina from 'piscina';
import { AppError, findAppError, type ErrorCode, type FieldProblem } from '../errors';

export interface WorkerPoolOptions {
  /** The compiled module whose named exports are the tasks (each made with `workerTask`). */
  filename: string;
  threads: number;
  /** Tasks waiting for a thread; beyond it a request is refused as busy rather than queued without end. */
  maxQueue: number;
  /**
   * Past it the task's thread is terminated and the document refused (422). Counted from when a thread starts the
   * task: the wait in the queue and a new thread's start-up are not the document's work, and on a busy machine they
   * refused documents that are fine.
   */
  taskTimeoutMs: number;
  /** Past it a task no thread has started yet leaves the queue and the request is refused as busy (503, retry). */
  queueTimeoutMs: number;
  /** Old-generation heap of each thread: a decompression bomb ends its thread, not the process. */
  maxMemoryMb: number;
  /** Given to each thread as `workerData` (its log level, say). */
  workerData?: unknown;
}

/** A task's answer: its value, or the refusal it raised (an AppError does not cross postMessage as one). */
export type TaskOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; refusal: { code: ErrorCode; message: string; errors?: FieldProblem[]; details?: Record<string, unknown> } };

/** What the pool hands a thread: the task's input, and a port on which the thread says that it has started it. */
interface TaskMessage<I> {
  input: I;
  started: MessagePort;
}

/** Wraps a task for the worker side: refusals travel back as data and become AppErrors again on the caller's side. */
export function workerTask<I, O>(run: (input: I) => O | Promise<O>): (message: TaskMessage<I>) => Promise<TaskOutcome<O>> {
  return async ({ input, started }) => {
    started.postMessage(null);
    started.close();
    try {
      return { ok: true, value: await run(input) };
    } catch (error) {
      const refusal = findAppError(error);
      if (!refusal) throw error;
      return {
        ok: false,
        refusal: { code: refusal.code, message: refusal.message, errors: refusal.errors, details: refusal.details },
      };
    }
  };
}

/**
 * A bounded pool of worker threads (piscina) for work on attacker-supplied bytes: parsing PDFs, verifying their
 * signatures, reading images. The event loop stays free for every other request, at most `threads` such tasks
 * run at once, each within a time and memory budget, and a full queue refuses at once.
 */
export class WorkerPool {
  private readonly pool: Piscina;

  constructor(private readonly options: WorkerPoolOptions) {
    this.pool = new Piscina({
      filename: options.filename,
      minThreads: 0,
      maxThreads: options.threads,
      maxQueue: options.maxQueue,
      idleTimeout: 30_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxMemoryMb },
      workerData: options.workerData,
    });
  }

  async run<T>(task: string, input: unknown): Promise<T> {
    if (this.pool.queueSize >= this.options.maxQueue) throw this.busy();
    let outcome: TaskOutcome<T>;
    // Two clocks: the wait for a thread (queueTimeoutMs), then, once the thread says it has started the task, the
    // work itself (taskTimeoutMs).
    const { port1, port2 } = new MessageChannel();
    const abort = new AbortController();
    let started = false;
    let timer = setTimeout(() => abort.abort(), this.options.queueTimeoutMs);
    port1.once('message', () => {
      started = true;
      clearTimeout(timer);
      timer = setTimeout(() => abort.abort(), this.options.taskTimeoutMs);
    });
    try {
      const message: TaskMessage<unknown> = { input, started: port2 };
      outcome = await this.pool.run(message, { name: task, signal: abort.signal, transferList: [port2] });
    } catch (error) {
      const name = (error as { name?: unknown; code?: unknown })?.name;
      const code = (error as { code?: unknown })?.code;
      if ((name === 'AbortError' || name === 'TimeoutError') && !started) throw this.busy();
      if (name === 'AbortError' || name === 'TimeoutError')
        throw this.tooMuchWork(`took longer than ${this.options.taskTimeoutMs} ms`);
      if (code === 'ERR_WORKER_OUT_OF_MEMORY') throw this.tooMuchWork(`needed more than ${this.options.maxMemoryMb} MB`);
      throw error;
    } finally {
      clearTimeout(timer);
      port1.close();
    }
    if (!outcome.ok) {
      const { code, message, errors, details } = outcome.refusal;
      throw new AppError(code, { message, errors, details });
    }
    return outcome.value;
  }

  private busy(): AppError {
    return new AppError('service_unavailable', {
      errors: [{ field: 'request', problem: 'every worker is busy with documents; retry shortly' }],
    });
  }

  private tooMuchWork(problem: string): AppError {
    return new AppError('unprocessable_content', {
      errors: [{ field: 'file', problem: `the document or image ${problem} to process` }],
    });
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
