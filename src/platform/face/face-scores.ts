/** What the face worker reports about the one face of an image. */
export interface DetectedFace {
  /** face-api's 128-d face descriptor (faceRecognitionNet, a ResNet-34 like dlib's). */
  descriptor: Float32Array;
  /** SSD MobileNet v1 confidence, 0.5 (the detection cut-off) to 1. */
  detectionScore: number;
  /** Face box in the pixels of the analysed (downscaled) image, and that image's size. */
  box: { x: number; y: number; width: number; height: number };
  imageWidth: number;
  imageHeight: number;
  /** The 68 points of face-api's landmark model (iBUG 300-W numbering: 0-16 jaw, 30 nose tip, 36-47 eyes). */
  landmarks: { x: number; y: number }[];
}

export function descriptorDistance(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] - b[i]) ** 2;
  return Math.sqrt(sum);
}

/** Distance scored 50: between face-api's usual same-person distances (< 0.45) and different people (> 0.6). */
const EVEN_DISTANCE = 0.55;
/** Chosen so that a distance of 0.45 scores exactly 80, the contract's default `face_match_threshold`. */
const DISTANCE_SPREAD = (EVEN_DISTANCE - 0.45) / Math.log(4);

/**
 * Descriptor distance -> 0-100, strictly decreasing: a logistic curve through (0.45, 80) and (0.55, 50).
 * Some points: 0.2 -> 99, 0.3 -> 97, 0.4 -> 89, 0.45 -> 80, 0.5 -> 67, 0.6 -> 33, 0.7 -> 11, 0.8 -> 3.
 * A logistic rather than a straight line keeps every distance inside 0-100 and spends the resolution of
 * the score where the decision is made (0.4-0.6), which is where the threshold range 50-100 applies.
 */
export function matchScoreFromDistance(distance: number): number {
  return roundScore(100 / (1 + Math.exp((distance - EVEN_DISTANCE) / DISTANCE_SPREAD)));
}

/**
 * A capture-quality score of the live image, 0-100: the product of three factors, each 0-1:
 * - detection confidence: 0 at the detector's cut-off 0.5, 1 from 0.95 up;
 * - face size: the face box width over the frame's shorter side, 0 at 8 %, 1 from 25 % up (a face held
 *   in front of the camera, not someone in the background);
 * - pose from the landmarks: yaw (nose tip against the jaw line's ends) and roll (tilt of the line between
 *   the eyes), 1 when roughly frontal, 0 at three-quarter profile or a 45 degree tilt.
 * The live image must also show exactly one face, or compare() refuses it before any score.
 *
 * Limits: face-api has no presentation-attack (anti-spoofing) model, and one still frame carries no motion,
 * depth or texture cue here. A printed photo, a screen replay or a mask held frontally to the camera scores
 * as high as a live person. This is a gate against unusable captures (blurred, tiny, turned away), not
 * liveness detection; real liveness needs a challenge-response or a dedicated PAD model or provider.
 */
export function livenessScore(face: DetectedFace): number {
  const confidence = ramp(face.detectionScore, 0.5, 0.95);
  const size = ramp(face.box.width / Math.min(face.imageWidth, face.imageHeight), 0.08, 0.25);
  const pose = (1 - ramp(yaw(face.landmarks), 0.15, 0.6)) * (1 - ramp(Math.abs(rollDegrees(face.landmarks)), 15, 45));
  return roundScore(100 * confidence * size * pose);
}

/** 0 when the nose tip is midway between the jaw line's ends, towards 1 as the head turns to profile. */
export function yaw(points: { x: number; y: number }[]): number {
  const [left, right, nose] = [points[0], points[16], points[30]];
  const toLeft = Math.hypot(nose.x - left.x, nose.y - left.y);
  const toRight = Math.hypot(nose.x - right.x, nose.y - right.y);
  return Math.abs(toLeft - toRight) / (toLeft + toRight);
}

/** Angle of the line from the centre of one eye (points 36-41) to the other's (42-47), in degrees. */
export function rollDegrees(points: { x: number; y: number }[]): number {
  const centre = (from: number) => {
    const eye = points.slice(from, from + 6);
    return { x: eye.reduce((sum, p) => sum + p.x, 0) / 6, y: eye.reduce((sum, p) => sum + p.y, 0) / 6 };
  };
  const [a, b] = [centre(36), centre(42)];
  return (Math.atan2(b.y - a.y, b.x - a.x) * 180) / Math.PI;
}

/** 0 below `from`, 1 above `to`, linear between. */
function ramp(value: number, from: number, to: number): number {
  return Math.min(1, Math.max(0, (value - from) / (to - from)));
}

const roundScore = (score: number) => Math.round(score * 10) / 10;
