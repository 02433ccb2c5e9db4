import { describe, expect, it } from 'vitest';
import {
  descriptorDistance,
  livenessScore,
  matchScoreFromDistance,
  rollDegrees,
  yaw,
  type DetectedFace,
} from '../../src/platform/face/face-scores';

/** 68 landmark points of an upright frontal face in a 100x100 box at (x, y), turned by moving the nose tip. */
function landmarks(options: { noseShift?: number; tiltDegrees?: number } = {}): { x: number; y: number }[] {
  const points = Array.from({ length: 68 }, () => ({ x: 50, y: 50 }));
  points[0] = { x: 0, y: 40 };
  points[16] = { x: 100, y: 40 };
  points[30] = { x: 50 + (options.noseShift ?? 0), y: 55 };
  for (let i = 36; i < 42; i++) points[i] = { x: 30, y: 35 };
  for (let i = 42; i < 48; i++) points[i] = { x: 70, y: 35 };
  const angle = ((options.tiltDegrees ?? 0) * Math.PI) / 180;
  return points.map(({ x, y }) => ({
    x: 50 + (x - 50) * Math.cos(angle) - (y - 50) * Math.sin(angle),
    y: 50 + (x - 50) * Math.sin(angle) + (y - 50) * Math.cos(angle),
  }));
}

function face(overrides: Partial<DetectedFace> = {}): DetectedFace {
  return {
    descriptor: new Float32Array(128),
    detectionScore: 0.99,
    box: { x: 200, y: 100, width: 200, height: 220 },
    imageWidth: 640,
    imageHeight: 480,
    landmarks: landmarks(),
    ...overrides,
  };
}

describe('matchScoreFromDistance', () => {
  it('puts the usual same-person distances at or above 80 and different people below 50', () => {
    expect(matchScoreFromDistance(0)).toBe(100);
    expect(matchScoreFromDistance(0.3)).toBeGreaterThan(95);
    expect(matchScoreFromDistance(0.45)).toBe(80);
    expect(matchScoreFromDistance(0.55)).toBe(50);
    expect(matchScoreFromDistance(0.6)).toBeLessThan(50);
    expect(matchScoreFromDistance(0.8)).toBeLessThan(5);
    expect(matchScoreFromDistance(2)).toBe(0);
  });

  it('never rises with the distance, stays within 0-100 and has one decimal', () => {
    let previous = Infinity;
    for (let distance = 0; distance <= 1.5; distance += 0.005) {
      const score = matchScoreFromDistance(distance);
      expect(score).toBeLessThanOrEqual(previous);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(100);
      expect(score * 10).toBeCloseTo(Math.round(score * 10), 9);
      previous = score;
    }
    expect(matchScoreFromDistance(0.4)).toBeGreaterThan(matchScoreFromDistance(0.5));
  });
});

describe('descriptorDistance', () => {
  it('is the euclidean distance', () => {
    const a = new Float32Array(128);
    const b = new Float32Array(128);
    b[0] = 0.3;
    b[127] = 0.4;
    expect(descriptorDistance(a, b)).toBeCloseTo(0.5, 6);
    expect(descriptorDistance(b, b)).toBe(0);
  });
});

describe('livenessScore', () => {
  it('is 100 for a confident, large, frontal face', () => {
    expect(yaw(landmarks())).toBe(0);
    expect(rollDegrees(landmarks())).toBe(0);
    expect(livenessScore(face())).toBe(100);
  });

  it('falls as the head turns or tilts', () => {
    expect(yaw(landmarks({ noseShift: 30 }))).toBeGreaterThan(0.5);
    expect(rollDegrees(landmarks({ tiltDegrees: 30 }))).toBeCloseTo(30, 6);
    const turned = livenessScore(face({ landmarks: landmarks({ noseShift: 20 }) }));
    expect(turned).toBeLessThan(80);
    expect(livenessScore(face({ landmarks: landmarks({ noseShift: 30 }) }))).toBeLessThan(turned);
    expect(livenessScore(face({ landmarks: landmarks({ tiltDegrees: 30 }) }))).toBe(50);
    expect(livenessScore(face({ landmarks: landmarks({ tiltDegrees: -50 }) }))).toBe(0);
  });

  it('falls with the detector confidence and with a face small in the frame', () => {
    expect(livenessScore(face({ detectionScore: 0.725 }))).toBe(50);
    expect(livenessScore(face({ detectionScore: 0.5 }))).toBe(0);
    expect(livenessScore(face({ box: { x: 0, y: 0, width: 79.2, height: 90 } }))).toBe(50); // 16.5 % of 480
    expect(livenessScore(face({ box: { x: 0, y: 0, width: 30, height: 35 } }))).toBe(0);
  });
});
