import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { FaceMatchError } from './face-match-error';
import type { FaceComparison, FaceMatcher } from './face-matcher';
import { descriptorDistance, livenessScore, matchScoreFromDistance, type DetectedFace } from './face-scores';
import type { DetectReply, DetectRequest } from './face-worker';

/**
 * A Worker cannot run a .ts file on Node 20. Compiled (npm start runs dist/src/main.js) the worker sits next to
 * this file; when vitest imports this module from src/, it runs the compiled copy in dist/ (npm test builds first).
 */
const WORKER_FILE =
  path.extname(__filename) === '.ts'
    ? path.resolve(__dirname, '../../../dist/src/platform/face/face-worker.js')
    : path.join(__dirname, 'face-worker.js');

/** How many analysed images to remember: a signer's reference photo comes back on every attempt. */
const RECENT_FACES = 32;

type Which = 'reference' | 'live';

interface PendingDetection {
  which: Which;
  resolve(face: DetectedFace): void;
  reject(error: Error): void;
}

interface RunningWorker {
  thread: Worker;
  pending: Map<number, PendingDetection>;
  stopReason?: string;
}

/**
 * face-api (SSD MobileNet v1, 68-point landmarks, the 128-d recognition net) on the TensorFlow.js WASM backend,
 * in one worker thread started on first use. The worker takes one image at a time in arrival order; if it dies,
 * the requests it held are rejected and the next call starts a new one. The faces of the last few images
 * are kept in memory by SHA-256 of their bytes, so a retried comparison only analyses the new live image.
 */
export class LocalFaceMatcher implements FaceMatcher {
  private running: RunningWorker | null = null;
  private nextId = 0;
  private readonly recentFaces = new Map<string, DetectedFace>();

  /**
   * @param timeoutMs the time budget of one image, loading the models included on first use: past it the worker
   * is stopped (every request it held is rejected) and the next call starts another.
   */
  constructor(private readonly timeoutMs = 60_000) {}

  async compare(reference: Uint8Array, live: Uint8Array): Promise<FaceComparison> {
    // The reference first: when it is unusable there is no point analysing the live image.
    const referenceFace = await this.detect(reference, 'reference');
    const liveFace = await this.detect(live, 'live');
    const distance = descriptorDistance(referenceFace.descriptor, liveFace.descriptor);
    return { matchScore: matchScoreFromDistance(distance), livenessScore: livenessScore(liveFace), distance };
  }

  async close(): Promise<void> {
    this.recentFaces.clear();
    const running = this.running;
    this.running = null;
    if (!running) return;
    running.stopReason = 'the face matcher was closed';
    await running.thread.terminate();
  }

  private async detect(image: Uint8Array, which: Which): Promise<DetectedFace> {
    const key = createHash('sha256').update(image).digest('base64');
    const known = this.recentFaces.get(key);
    // Deleted and set again: a Map iterates in insertion order, so its first key is the least recently used.
    this.recentFaces.delete(key);
    const face = known ?? (await this.analyse(image, which));
    this.recentFaces.set(key, face);
    if (this.recentFaces.size > RECENT_FACES) this.recentFaces.delete(this.recentFaces.keys().next().value!);
    return face;
  }

  private analyse(image: Uint8Array, which: Which): Promise<DetectedFace> {
    const running = this.running ?? this.startWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        running.stopReason ??= `an image took longer than ${this.timeoutMs} ms`;
        if (this.running === running) this.running = null;
        void running.thread.terminate();
      }, this.timeoutMs);
      timer.unref();
      running.pending.set(id, {
        which,
        resolve: (face) => {
          clearTimeout(timer);
          resolve(face);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      running.thread.ref();
      running.thread.postMessage({ id, image } satisfies DetectRequest);
    });
  }

  private startWorker(): RunningWorker {
    if (!existsSync(WORKER_FILE)) throw new Error(`The face worker ${WORKER_FILE} is missing: run npm run build`);
    const running: RunningWorker = { thread: new Worker(WORKER_FILE), pending: new Map() };
    const { thread } = running;
    // Referenced only while it owes answers: an idle worker must not keep the process alive.
    thread.unref();
    thread.on('message', (reply: DetectReply) => this.answer(running, reply));
    thread.on('error', (error) => {
      running.stopReason ??= error.message;
      if (this.running === running) this.running = null;
    });
    thread.on('exit', (code) => {
      if (this.running === running) this.running = null;
      const error = new Error(`The face-match worker stopped before answering: ${running.stopReason ?? `exit code ${code}`}`);
      for (const pending of running.pending.values()) pending.reject(error);
      running.pending.clear();
    });
    this.running = running;
    return running;
  }

  private answer(running: RunningWorker, reply: DetectReply): void {
    const pending = running.pending.get(reply.id);
    if (!pending) return;
    running.pending.delete(reply.id);
    if (running.pending.size === 0) running.thread.unref();
    if ('face' in reply) pending.resolve(reply.face);
    else if ('refusal' in reply) {
      pending.reject(new FaceMatchError(reply.refusal, pending.which, `The ${pending.which} image: ${reply.detail}`));
    } else pending.reject(new Error(`Face matching failed on the ${pending.which} image: ${reply.failure}`));
  }
}
