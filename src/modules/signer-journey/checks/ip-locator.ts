/**
 * Where an IP address is, for `location_source: ip`. No database of addresses ships with the service: a
 * geolocation provider is configured with IP_GEOLOCATION_URL (a URL template with `{ip}`, answering JSON
 * with `latitude`/`longitude` or `lat`/`lon`). Without one, the address is recorded and the position is null.
 */
export interface IpLocator {
  locate(ip: string): Promise<{ latitude: number; longitude: number } | null>;
}

export const noIpLocator: IpLocator = { locate: async () => null };

export function httpIpLocator(urlTemplate: string, timeoutMs = 3000): IpLocator {
  return {
    async locate(ip) {
      try {
        const response = await fetch(urlTemplate.replace('{ip}', encodeURIComponent(ip)), {
          signal: AbortSignal.timeout(timeoutMs),
          headers: { accept: 'application/json' },
        });
        if (!response.ok) return null;
        const body = (await response.json()) as Record<string, unknown>;
        const latitude = Number(body.latitude ?? body.lat);
        const longitude = Number(body.longitude ?? body.lon ?? body.lng);
        if (!Number.isFinite(latitude) || !Number.isFinite(longitude)) return null;
        if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) return null;
        return { latitude, longitude };
      } catch {
        return null; // a provider that is down locates nothing; the geofence then refuses with a clear message
      }
    },
  };
}

export function ipLocatorFrom(config: { ipGeolocationUrl?: string }): IpLocator {
  return config.ipGeolocationUrl ? httpIpLocator(config.ipGeolocationUrl) : noIpLocator;
}
