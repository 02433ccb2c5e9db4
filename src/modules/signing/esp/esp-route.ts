import type { EspConfig } from '../../../config';
import { MAX_ESPS_PER_BACKEND } from '../../../config/esp-backends';
import type { AppServices } from '../../../platform/services';

/**
 * ESP failover: what a session's `backend` names, as the ordered ESPs a signer may be sent to. Three forms, each
 * kept as written on the session: one ESP (`nsdl`), a configured group (`ESP_GROUP_INDIA=nsdl,emudhra` → `india`,
 * read when the signer starts, so a changed group applies to open sessions), or a list written out
 * (`nsdl,emudhra`, comma-separated, in the order they are tried). The contract's `backend` is one string, so a list
 * is written in it rather than as an array: the REST answer keeps its type.
 */
export function espRoute(services: AppServices, backend: string): EspConfig[] | undefined {
  const { esps, espRouting } = services.config;
  const names = Object.hasOwn(espRouting.groups, backend) ? espRouting.groups[backend]! : backend.split(',');
  const route = names.map((name) => (Object.hasOwn(esps, name) ? esps[name] : undefined));
  return route.length > 0 && route.every(Boolean) ? (route as EspConfig[]) : undefined;
}

/**
 * A `backend` as a session keeps it (names trimmed and in lower case), or why it names no route: an unknown ESP
 * or group, an ESP named twice, more than MAX_ESPS_PER_BACKEND of them.
 */
export function normalizeBackend(
  config: Pick<AppServices['config'], 'esps' | 'espRouting'>,
  value: string,
): { backend: string } | { problem: string } {
  const names = value.split(',').map((name) => name.trim().toLowerCase());
  const known = [...Object.keys(config.esps), ...Object.keys(config.espRouting.groups)];
  if (names.length === 1) {
    return known.includes(names[0]!) ? { backend: names[0]! } : { problem: `must be one of ${known.join(', ')}` };
  }
  const unknown = names.filter((name) => !Object.hasOwn(config.esps, name));
  if (unknown.length > 0)
    return { problem: `a list names ESPs (${Object.keys(config.esps).join(', ')}): not ${unknown.join(', ')}` };
  if (new Set(names).size !== names.length) return { problem: 'an ESP is named twice' };
  if (names.length > MAX_ESPS_PER_BACKEND) return { problem: `at most ${MAX_ESPS_PER_BACKEND} ESPs` };
  return { backend: names.join(',') };
}
