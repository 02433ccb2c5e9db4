/**
 * The face-api worker thread: decodes an image, finds its faces and describes the one face. It runs in a
 * worker_threads Worker (see local-face-matcher.ts) so that inference never blocks the HTTP event loop.
 */
import path from 'node:path';
import { parentPort } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import * as faceapi from '@vladmandic/face-api/dist/face-api.node-wasm.js';
import { decodeImage, downscale, UnreadableImageError, type RgbImage } from './decode-image';
import type { FaceMatchRefusal } from './face-match-error';
import type { DetectedFace } from './face-scores';
import { createLogger, routeConsoleToLogger } from '../logger';

// What tfjs and face-api print in this thread becomes JSON log lines, as in the main thread.
routeConsoleToLogger(createLogger(process.env.LOG_LEVEL ?? 'info'));

export interface DetectRequest {
  id: number;
  image: Uint8Array;
}

export type DetectOutcome = { face: DetectedFace } | { refusal: FaceMatchRefusal; detail: string } | { failure: string };
export type DetectReply = { id: number } & DetectOutcome;

/** Longest side the models see: SSD works at 512x512 anyway, and a face filling a selfie stays ~200 px wide. */
const MAX_SIDE = 640;
const DETECTION = new faceapi.SsdMobilenetv1Options({ minConfidence: 0.5, maxResults: 10 });

const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

async function loadModels(): Promise<void> {
  // Local files only: the .wasm binaries and the weights both come from node_modules, never from a CDN.
  setWasmPaths(path.join(packageDir('@tensorflow/tfjs-backend-wasm'), 'dist') + path.sep);
  tf.enableProdMode();
  if (!(await tf.setBackend('wasm'))) throw new Error('the TensorFlow.js WASM backend did not start');
  await tf.ready();
  const models = path.join(packageDir('@vladmandic/face-api'), 'model');
  await faceapi.nets.ssdMobilenetv1.loadFromDisk(models);
  await faceapi.nets.faceLandmark68Net.loadFromDisk(models);
  await faceapi.nets.faceRecognitionNet.loadFromDisk(models);
}

async function detectFace(bytes: Uint8Array): Promise<DetectOutcome> {
  let image: RgbImage;
  try {
    image = downscale(decodeImage(bytes), MAX_SIDE);
  } catch (error) {
    if (error instanceof UnreadableImageError) return { refusal: 'unreadable_image', detail: error.message };
    throw error;
  }
  const input = faceapi.tf.tensor3d(image.data, [image.height, image.width, 3], 'int32');
  try {
    const faces = await faceapi.detectAllFaces(input, DETECTION).withFaceLandmarks().withFaceDescriptors();
    if (faces.length === 0) return { refusal: 'no_face', detail: 'no face found' };
    if (faces.length > 1) return { refusal: 'several_faces', detail: `${faces.length} faces found, it must show exactly one` };
    const { detection, landmarks, descriptor } = faces[0];
    const { x, y, width, height } = detection.box;
    return {
      face: {
        descriptor,
        detectionScore: detection.score,
        box: { x, y, width, height },
        imageWidth: image.width,
        imageHeight: image.height,
        landmarks: landmarks.positions.map((point) => ({ x: point.x, y: point.y })),
      },
    };
  } finally {
    input.dispose();
  }
}

const port = parentPort!;
const ready = loadModels();
let previous = Promise.resolve();

port.on('message', (request: DetectRequest) => {
  // One image at a time: the WASM backend has one heap, and interleaved inferences would only raise its peak.
  // If the models fail to load, the rejection goes unhandled and ends the worker: the main thread then
  // rejects every pending request with the reason, and its next call starts a fresh worker.
  previous = previous.then(async () => {
    await ready;
    try {
      port.postMessage({ id: request.id, ...(await detectFace(request.image)) } satisfies DetectReply);
    } catch (error) {
      port.postMessage({ id: request.id, failure: (error as Error).message ?? String(error) } satisfies DetectReply);
    }
  });
});
