import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError, type FieldProblem } from '../../../platform/errors';
import type { AppServices } from '../../../platform/services';
import { recordAudit, type RequestOrigin } from '../../audit';
import { type SignerLocation, lockTurn, signerByToken } from '../../esign/signer-side';
import { assertCheckIsDue } from './checks';
import { ipLocatorFrom } from './ip-locator';
import { publishCheckProgress } from './one-time-codes';

const EARTH_RADIUS_M = 6_371_008.8; // the mean radius (IUGG)

/** Great-circle distance in metres (haversine). */
export function distanceMetres(a: { latitude: number; longitude: number }, b: { latitude: number; longitude: number }): number {
  const rad = (degrees: number) => (degrees * Math.PI) / 180;
  const dLat = rad(b.latitude - a.latitude);
  const dLon = rad(b.longitude - a.longitude);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a.latitude)) * Math.cos(rad(b.latitude)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(h)));
}

export function describeDistance(metres: number): string {
  return metres < 1000 ? `${Math.round(metres)} m` : `${(metres / 1000).toFixed(1)} km`;
}

interface DevicePosition {
  latitude?: unknown;
  longitude?: unknown;
  accuracy?: unknown;
}

function devicePosition(input: DevicePosition): { latitude: number; longitude: number; accuracy: number | null } {
  const missing = (['latitude', 'longitude'] as const).filter((key) => input[key] === undefined || input[key] === null);
  if (missing.length > 0) throw AppError.missingFields(missing);
  const problems: FieldProblem[] = [];
  const number = (key: keyof DevicePosition, min: number, max: number) => {
    const value = input[key];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
      problems.push({ field: key, problem: `a number from ${min} to ${max}` });
      return NaN;
    }
    return value;
  };
  const latitude = number('latitude', -90, 90);
  const longitude = number('longitude', -180, 180);
  const accuracy = input.accuracy === undefined || input.accuracy === null ? null : number('accuracy', 0, 1e7);
  if (problems.length > 0) throw AppError.badRequest(problems);
  return { latitude, longitude, accuracy };
}

type Outcome = { ok: true; location: SignerLocation } | { ok: false; error: AppError };

/**
 * The location check: `device` takes the browser's coordinates, `ip` the request's address (the forwarded one
 * only behind TRUST_PROXY) located by the configured provider. With `enforce_geofence`, a position farther than
 * `radius` metres from the signer's point refuses, and the signer may try again from within it.
 */
export async function recordSignerLocation(
  services: AppServices,
  em: EntityManager,
  token: string | null,
  input: DevicePosition,
  origin: RequestOrigin,
): Promise<SignerLocation> {
  const found = await signerByToken(em, token);
  const source = found.locationSource ?? 'device';
  const position =
    source === 'device'
      ? devicePosition(input)
      : {
          ...((origin.ip && (await ipLocatorFrom(services.config).locate(origin.ip))) || { latitude: null, longitude: null }),
          accuracy: null,
        };

  const outcome: Outcome = await em.transactional(async (tx) => {
    const { session, signer } = await lockTurn(tx, found);
    assertCheckIsDue(signer, 'location');
    let distance: number | null = null;
    if (signer.enforceGeofence) {
      if (position.latitude === null || position.longitude === null) {
        recordAudit(tx, { session, signer, event: 'location_refused', origin, details: { source, reason: 'position unknown' } });
        return {
          ok: false,
          error: new AppError('location_unavailable', {
            errors: [
              {
                field: 'location',
                problem:
                  'your position could not be established from your network address, so the signing area cannot be checked',
              },
            ],
          }),
        };
      }
      const centre = { latitude: signer.latitude!, longitude: signer.longitude! };
      distance = distanceMetres(centre, { latitude: position.latitude, longitude: position.longitude });
      if (distance > signer.radius!) {
        recordAudit(tx, {
          session,
          signer,
          event: 'location_refused',
          origin,
          details: { source, latitude: position.latitude, longitude: position.longitude, distance_m: Math.round(distance) },
        });
        return {
          ok: false,
          error: new AppError('outside_geofence', {
            errors: [
              {
                field: 'location',
                problem: `you are ${describeDistance(distance)} from the signing location; signing is allowed within ${describeDistance(signer.radius!)} of it`,
              },
            ],
          }),
        };
      }
    }
    signer.location = {
      source,
      latitude: position.latitude,
      longitude: position.longitude,
      accuracy_m: position.accuracy,
      ip: origin.ip,
      distance_m: distance === null ? null : Math.round(distance * 10) / 10,
      recorded_at: new Date().toISOString(),
    };
    recordAudit(tx, { session, signer, event: 'location_recorded', origin, details: { ...signer.location } });
    await publishCheckProgress(services, tx, session, signer);
    return { ok: true, location: signer.location };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.location;
}
