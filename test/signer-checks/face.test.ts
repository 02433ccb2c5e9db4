import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, restUpload, type Envelope } from '../helpers/clients';
import { createSession, sessionBody, signerInput, uploadPdf } from '../helpers/factories';
import { blankPicture, brighten, jpegBytes, pngBytes, resize, sampleFace, sampleFaceJpeg } from '../helpers/faces';

// face-api runs on the CPU in a worker thread: a comparison takes about a second, much more on a busy machine.
const SLOW = 180_000;

describe('the face check through the signer API', () => {
  let app: TestApp;
  let owner: TestUser;
  let file: string;
  let reference: string;
  const SAME_FACE = jpegBytes(brighten(resize(sampleFace(6, 2), 200), 20), 85);
  const OTHER_FACE = sampleFaceJpeg(6, 3);
  const NO_FACE = pngBytes(blankPicture(160, 160, (x, y) => [x, y, 128]));

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    file = await uploadPdf(app, owner.token);
    const uploaded = await restUpload<any>(app, '/files/upload-asset', owner.token, {
      bytes: sampleFaceJpeg(6, 2),
      filename: 'ref.jpg',
    });
    reference = uploaded.body.data.client_id;
  });
  afterAll(async () => app.close());

  async function sendPhoto(token: string, photo: Uint8Array, type = 'image/jpeg') {
    const response = await fetch(new URL('/signer-api/face', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': type },
      body: new Uint8Array(photo),
    });
    return { status: response.status, body: (await response.json()) as Envelope<any> };
  }
  const faceSession = (attempts: number, referenceId = reference) =>
    createSession(
      app,
      owner.token,
      sessionBody(file, { signers: [signerInput({ face_ref_file_id: referenceId, face_max_attempts: attempts })] }),
    );
  const details = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: clientId } })).body.data;

  it(
    'refuses a stranger and a photo without a face, each costing an attempt, then passes the signer and records the scores',
    async () => {
      const session = await faceSession(3);
      const token = session.signers[0].token;
      const view = await fetch(new URL('/signer-api/session', app.url), { headers: { authorization: `Bearer ${token}` } });
      expect(((await view.json()) as any).data.checks).toEqual([{ kind: 'face', status: 'pending', attempts_left: 3 }]);

      // Refused before any attempt is taken: the wrong type, nothing, bytes that are no image.
      expect((await sendPhoto(token, SAME_FACE, 'application/octet-stream')).status).toBe(415);
      expect((await sendPhoto(token, new Uint8Array(0))).body.message).toBe('missing_fields');
      expect((await sendPhoto(token, Buffer.from('not a photo at all'))).body.errors).toEqual([
        { field: 'image', problem: 'a JPEG or PNG photo' },
      ]);

      const stranger = await sendPhoto(token, OTHER_FACE);
      expect(stranger.status).toBe(400);
      expect(stranger.body.message).toBe('face_mismatch');
      expect(stranger.body.errors![0].problem).toMatch(
        /^the face does not match \(score [\d.]+, 80 needed\); 2 attempt\(s\) left$/,
      );
      const strangerScore = Number(/score ([\d.]+)/.exec(stranger.body.errors![0].problem)![1]);
      expect(strangerScore).toBeLessThan(50);
      let read = await details(session.client_id);
      expect(read.signers[0].face_match).toMatchObject({ enforce: true, match_score: null, liveness_score: null });
      expect(read.signers[0].face_match.live_file_id).toMatch(/^file_/);

      const blank = await sendPhoto(token, NO_FACE, 'image/png');
      expect(blank.status).toBe(400);
      expect(blank.body).toMatchObject({
        message: 'face_not_found',
        errors: [{ field: 'image', problem: 'no face found in the photo; 1 attempt(s) left' }],
      });
      expect(
        (
          await fetch(new URL('/signer-api/sign', app.url), {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ consent: true }),
          })
        ).status,
      ).toBe(409);

      const me = await sendPhoto(token, SAME_FACE);
      expect(me.status, JSON.stringify(me.body)).toBe(200);
      expect(me.body.data).toMatchObject({ status: 'passed', attempts_left: 0 });
      expect(me.body.data.match_score).toBeGreaterThanOrEqual(80);
      expect(me.body.data.liveness_score).toBeGreaterThan(0);
      read = await details(session.client_id);
      expect(read.signers[0].face_match).toMatchObject({
        match_score: me.body.data.match_score,
        liveness_score: me.body.data.liveness_score,
      });
      // The live photo is the owner's evidence: a file of theirs.
      const live = await rest<any>(app, 'GET', '/files/details', {
        token: owner.token,
        query: { client_id: read.signers[0].face_match.live_file_id },
      });
      expect(live.body.data).toMatchObject({ mime: 'image/jpeg', size_bytes: SAME_FACE.length });

      const trail = (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } }))
        .body.data;
      const attempts = trail.events.filter((event: any) => event.event === 'face_attempt').map((event: any) => event.details);
      expect(attempts).toEqual([
        expect.objectContaining({ attempt: 1, passed: false, match_score: strangerScore, threshold: 80 }),
        expect.objectContaining({ attempt: 2, passed: false, refused: 'no_face' }),
        expect.objectContaining({ attempt: 3, passed: true, match_score: me.body.data.match_score }),
      ]);
    },
    SLOW,
  );

  it(
    'fails the signer when the last attempt fails, and never lets concurrent tries exceed the limit',
    async () => {
      const session = await faceSession(2);
      const token = session.signers[0].token;
      const tries = await Promise.all(Array.from({ length: 5 }, () => sendPhoto(token, OTHER_FACE)));
      const statuses = tries.map((attempt) => attempt.status).sort();
      expect(statuses).toEqual([400, 400, 409, 409, 409]);
      const read = await details(session.client_id);
      expect(read.signers[0].status).toBe('failed');
      const trail = (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: session.client_id } }))
        .body.data;
      expect(trail.events.filter((event: any) => event.event === 'face_attempt')).toHaveLength(2);
      expect(trail.events.filter((event: any) => event.event === 'signer_failed')).toHaveLength(1);
      expect((await sendPhoto(token, SAME_FACE)).status).toBe(409);
    },
    SLOW,
  );

  it(
    'does not count an attempt against the signer when the owner’s reference photo is unusable',
    async () => {
      const faceless = await restUpload<any>(app, '/files/upload-asset', owner.token, { bytes: NO_FACE, filename: 'nobody.png' });
      const session = await faceSession(1, faceless.body.data.client_id);
      const token = session.signers[0].token;
      const refused = await sendPhoto(token, SAME_FACE);
      expect(refused.status).toBe(409);
      expect(refused.body.message).toMatch(/^the reference photo cannot be used/);
      const read = await details(session.client_id);
      expect(read.signers[0].status).toBe('pending');
      const view = await fetch(new URL('/signer-api/session', app.url), { headers: { authorization: `Bearer ${token}` } });
      expect(((await view.json()) as any).data.checks).toEqual([{ kind: 'face', status: 'pending', attempts_left: 1 }]);
    },
    SLOW,
  );
});
