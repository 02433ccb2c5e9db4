import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaceMatcher, FaceMatchError, type FaceComparison, type FaceMatcher } from '../../src/platform/face';
import { LocalFaceMatcher } from '../../src/platform/face/local-face-matcher';
import {
  blankPicture,
  brighten,
  CROPPABLE_FACES,
  jpegBytes,
  LANDMARK_DRAWING_PATH,
  placeOn,
  pngBytes,
  resize,
  sampleFace,
  samplePhoto,
  WEBCAM_PHOTO_PATH,
  type SampleNumber,
} from '../helpers/faces';

/** The contract's default face_match_threshold. */
const DEFAULT_THRESHOLD = 80;

const faceJpeg = (n: SampleNumber, index: number) => jpegBytes(sampleFace(n, index));
const webcamPhoto = () => readFileSync(WEBCAM_PHOTO_PATH);

/** The same face as a signer's camera or a re-upload might give it. */
function variantsOf(n: SampleNumber, index: number): Record<string, Buffer> {
  const face = sampleFace(n, index);
  return {
    'JPEG quality 60': jpegBytes(face, 60),
    PNG: pngBytes(face),
    'half size': jpegBytes(resize(face, Math.round(face.width / 2))),
    'twice the size': jpegBytes(resize(face, face.width * 2)),
    'tighter crop': jpegBytes(sampleFace(n, index, 1.6)),
    brighter: jpegBytes(brighten(face, 40)),
    darker: jpegBytes(brighten(face, -40)),
  };
}

async function refusal(comparison: Promise<FaceComparison>): Promise<FaceMatchError> {
  const error = await comparison.then(
    () => null,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(FaceMatchError);
  return error as FaceMatchError;
}

// Each image costs a few hundred milliseconds of WASM inference, several times that on a busy machine.
describe('face matching with face-api in a worker thread', { timeout: 180_000 }, () => {
  let matcher: FaceMatcher;

  beforeAll(() => {
    matcher = createFaceMatcher();
  });
  afterAll(() => matcher.close());

  it('scores the same face re-encoded, rescaled, cropped closer or brightness-shifted at 80 or more', async () => {
    const results: ({ face: string; change: string } & FaceComparison)[] = [];
    for (const [n, index] of [
      [6, 2],
      [3, 0],
      [5, 3],
    ] as const) {
      const reference = faceJpeg(n, index);
      for (const [change, live] of Object.entries(variantsOf(n, index))) {
        results.push({ face: `${n}/${index}`, change, ...(await matcher.compare(reference, live)) });
      }
    }
    expect(results).toHaveLength(21);
    expect(results.filter((result) => result.matchScore < DEFAULT_THRESHOLD || result.distance >= 0.45)).toEqual([]);
  });

  it('scores different people (faces of one group photo) below 50, none reaching the default threshold', async () => {
    const scores: { pair: string; matchScore: number }[] = [];
    for (const [n, indexes] of Object.entries(CROPPABLE_FACES)) {
      const sample = Number(n) as SampleNumber;
      for (const [i, a] of indexes.entries()) {
        for (const b of indexes.slice(i + 1)) {
          const { matchScore } = await matcher.compare(faceJpeg(sample, a), faceJpeg(sample, b));
          scores.push({ pair: `${sample}/${a} ~ ${sample}/${b}`, matchScore });
        }
      }
    }
    expect(scores).toHaveLength(26);
    // face-api's descriptor is not that sharp: one pair of these 26 (4/1 ~ 4/3) lands at about 72.
    expect(scores.filter((score) => score.matchScore >= DEFAULT_THRESHOLD)).toEqual([]);
    expect(scores.filter((score) => score.matchScore < 50).length).toBeGreaterThanOrEqual(24);
    const sorted = scores.map((score) => score.matchScore).sort((a, b) => a - b);
    expect(sorted[sorted.length >> 1]).toBeLessThan(30);
  });

  it('scores a man at his webcam against each woman of the samples below 50', async () => {
    const results: ({ face: string } & FaceComparison)[] = [];
    for (const [n, indexes] of Object.entries(CROPPABLE_FACES)) {
      for (const index of indexes) {
        results.push({
          face: `${n}/${index}`,
          ...(await matcher.compare(faceJpeg(Number(n) as SampleNumber, index), webcamPhoto())),
        });
      }
    }
    expect(results).toHaveLength(20);
    expect(results.filter((result) => result.matchScore >= 50)).toEqual([]);
  });

  it('gives a frontal capture a high liveness score, and a turned, tilted or distant face a lower one', async () => {
    const liveness = async (live: Buffer) => (await matcher.compare(live, live)).livenessScore;
    const frontal = await liveness(webcamPhoto());
    expect(frontal).toBeGreaterThanOrEqual(70);
    expect(await liveness(faceJpeg(6, 2))).toBeGreaterThanOrEqual(70);
    expect(await liveness(faceJpeg(5, 1))).toBeLessThan(frontal - 30); // head turned three-quarters away
    expect(await liveness(faceJpeg(1, 2))).toBeLessThan(frontal - 30); // head tilted about 45 degrees
    const face = sampleFace(6, 2);
    const nearby = await liveness(jpegBytes(placeOn(face, 1280, 960, { x: 300, y: 200 })));
    const distant = await liveness(jpegBytes(placeOn(resize(face, Math.round(face.width / 2)), 1280, 960, { x: 300, y: 200 })));
    expect(distant).toBeLessThan(nearby - 30);
  });

  it('returns scores between 0 and 100 with one decimal', async () => {
    const result = await matcher.compare(faceJpeg(3, 0), faceJpeg(3, 1));
    for (const score of [result.matchScore, result.livenessScore]) {
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(100);
      expect(score * 10).toBeCloseTo(Math.round(score * 10), 9);
    }
  });

  it('refuses an image without a face: no_face', async () => {
    const gradient = pngBytes(blankPicture(320, 240, (x, y) => [x % 256, y % 256, 128]));
    expect(await refusal(matcher.compare(faceJpeg(6, 2), gradient))).toMatchObject({ reason: 'no_face', which: 'live' });
    expect(await refusal(matcher.compare(readFileSync(LANDMARK_DRAWING_PATH), faceJpeg(6, 2)))).toMatchObject({
      reason: 'no_face',
      which: 'reference',
    });
  });

  it('refuses bytes that are not a JPEG or PNG, or a broken one: unreadable_image', async () => {
    const face = faceJpeg(6, 2);
    const broken = {
      'random bytes': randomBytes(4096),
      'a PDF': Buffer.from('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n%%EOF\n'),
      'a JPEG cut in half': face.subarray(0, face.length >> 1),
      'a JPEG signature then junk': Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), randomBytes(4096)]),
      'a PNG signature then junk': Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(64)]),
      'nothing at all': Buffer.alloc(0),
    };
    for (const [what, bytes] of Object.entries(broken)) {
      expect({ what, ...(await refusal(matcher.compare(face, bytes))) }).toMatchObject({
        reason: 'unreadable_image',
        which: 'live',
      });
      expect({ what, ...(await refusal(matcher.compare(bytes, face))) }).toMatchObject({
        reason: 'unreadable_image',
        which: 'reference',
      });
    }
  });

  it('refuses a group photo: several_faces', async () => {
    const error = await refusal(matcher.compare(faceJpeg(6, 2), samplePhoto(4)));
    expect(error).toMatchObject({ reason: 'several_faces', which: 'live' });
    expect(error.message).toMatch(/4 faces/);
    expect(await refusal(matcher.compare(samplePhoto(1), faceJpeg(6, 2)))).toMatchObject({
      reason: 'several_faces',
      which: 'reference',
    });
  });
});

describe('the face worker', { timeout: 180_000 }, () => {
  // Answers crossed between requests would turn a "same" into a "different", or a refusal into a score.
  const jobs: { reference: Buffer; live: Buffer; expected: string }[] = [
    { reference: faceJpeg(6, 3), live: jpegBytes(brighten(sampleFace(6, 3), 25)), expected: 'same' },
    { reference: faceJpeg(3, 0), live: jpegBytes(resize(sampleFace(3, 0), 300)), expected: 'same' },
    { reference: faceJpeg(3, 0), live: faceJpeg(6, 3), expected: 'different' },
    { reference: webcamPhoto(), live: faceJpeg(1, 0), expected: 'different' },
    { reference: faceJpeg(5, 3), live: samplePhoto(2), expected: 'several_faces' },
    { reference: randomBytes(100), live: faceJpeg(1, 0), expected: 'unreadable_image' },
  ];
  const verdict = (result: FaceComparison) =>
    result.matchScore >= DEFAULT_THRESHOLD ? 'same' : result.matchScore < 50 ? 'different' : 'unsure';

  it('answers concurrent compares each with its own result, queued while the models load', async () => {
    const matcher = createFaceMatcher();
    const verdicts = await Promise.all(
      jobs.map((job) => matcher.compare(job.reference, job.live).then(verdict, (error: FaceMatchError) => error.reason)),
    );
    await matcher.close();
    expect(verdicts).toEqual(jobs.map((job) => job.expected));
  });

  it('starts a new worker after close(), and rejects what was pending when close() came', async () => {
    const matcher = new LocalFaceMatcher();
    const [reference, live] = [faceJpeg(5, 3), jpegBytes(brighten(sampleFace(5, 3), -30))];
    const before = await matcher.compare(reference, live);
    const firstThread = matcher['running']!.thread.threadId;

    const pending = matcher.compare(faceJpeg(6, 0), faceJpeg(6, 1));
    await matcher.close();
    await expect(pending).rejects.toThrow(/worker stopped before answering: the face matcher was closed/);

    const after = await matcher.compare(reference, live);
    expect(matcher['running']!.thread.threadId).not.toBe(firstThread);
    expect(after).toEqual(before);
    await matcher.close();
  });

  it('rejects the requests of a worker that dies, and the next compare starts a new one', async () => {
    const matcher = new LocalFaceMatcher();
    const pending = matcher.compare(faceJpeg(1, 0), faceJpeg(1, 1));
    const dying = matcher['running']!.thread;
    // Killed behind the matcher's back, as a crash or an out-of-memory abort would end it.
    await dying.terminate();
    await expect(pending).rejects.toThrow(/face-match worker stopped before answering: exit code \d+/);

    const result = await matcher.compare(faceJpeg(6, 2), jpegBytes(resize(sampleFace(6, 2), 250)));
    expect(matcher['running']!.thread.threadId).not.toBe(dying.threadId);
    expect(result.matchScore).toBeGreaterThanOrEqual(DEFAULT_THRESHOLD);
    await matcher.close();
  });

  it('stops a worker that takes longer than its time budget, rejects what it held, and starts afresh', async () => {
    // 50 ms cannot even load the models: the first image runs out of time.
    const impatient = new LocalFaceMatcher(50);
    await expect(impatient.compare(faceJpeg(1, 0), faceJpeg(1, 1))).rejects.toThrow(
      /worker stopped before answering: an image took longer than 50 ms/,
    );
    expect(impatient['running']).toBeNull();
    await impatient.close();

    const patient = new LocalFaceMatcher(120_000);
    const result = await patient.compare(faceJpeg(6, 2), jpegBytes(resize(sampleFace(6, 2), 250)));
    expect(result.matchScore).toBeGreaterThanOrEqual(DEFAULT_THRESHOLD);
    await patient.close();
  });
});
