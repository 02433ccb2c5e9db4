import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { EspConfig } from './app-config';
import type { Env } from './env-schema';

/** `ESP_<NAME>_URL`: one per ESP backend; its other variables share the prefix. */
export const ESP_URL = /^ESP_([A-Z0-9]+)_URL$/;

/**
 * The ESP backends: each `ESP_<NAME>_URL` with its `_CERT` (PEM text or a file), `_ASP_ID`, `_ASP_PFX`,
 * `_ASP_PFX_PASSWORD`, `_VERSION` (2.1 or 3.2), `_TIMEOUT_SECONDS` and `_PROBE_TIMEOUT_SECONDS`, and for 3.2
 * `_AUTH_URL` (the ESP's authentication page) and `_ACK_TIMEOUT_SECONDS`; the backend is `<name>` in lower case. In
 * sandbox (and in production with ALLOW_SANDBOX_ESP) `sandbox` is the built-in gateway unless ESP_SANDBOX_URL names
 * another, which then needs its certificate and an ASP key like any ESP.
 */
export function espBackends(
  source: NodeJS.ProcessEnv,
  env: Env,
  publicUrl: string,
  problems: string[],
): Record<string, EspConfig> {
  const esps: Record<string, EspConfig> = {};
  const names = Object.keys(source)
    .map((key) => ESP_URL.exec(key)?.[1])
    .filter((name): name is string => !!name);
  const sandboxAllowed = env.APP_ENV === 'sandbox' || env.ALLOW_SANDBOX_ESP;
  if (sandboxAllowed && !names.includes('SANDBOX')) names.push('SANDBOX');
  for (const name of names) {
    const value = (suffix: string) => source[`ESP_${name}_${suffix}`]?.trim() || undefined;
    const builtIn = name === 'SANDBOX' && !value('URL');
    const version = value('VERSION') ?? '2.1';
    if (version !== '2.1' && version !== '3.2') problems.push(`ESP_${name}_VERSION: 2.1 or 3.2`);
    const timeout = Number(value('TIMEOUT_SECONDS') ?? 900);
    if (!Number.isInteger(timeout) || timeout < 1 || timeout > 86_400) problems.push(`ESP_${name}_TIMEOUT_SECONDS: 1 to 86400`);
    const url = builtIn ? `${publicUrl}/sandbox/esp` : value('URL')!;
    if (!/^https?:\/\/\S+$/.test(url)) problems.push(`ESP_${name}_URL: an http(s) URL`);
    const authUrl = builtIn ? `${publicUrl}/sandbox/esp/authpage` : value('AUTH_URL');
    if (version === '3.2' && !authUrl) problems.push(`ESP_${name}_AUTH_URL: required with ESP_${name}_VERSION=3.2`);
    if (authUrl && !/^https?:\/\/\S+$/.test(authUrl)) problems.push(`ESP_${name}_AUTH_URL: an http(s) URL`);
    const ackTimeout = Number(value('ACK_TIMEOUT_SECONDS') ?? 20);
    if (!Number.isInteger(ackTimeout) || ackTimeout < 1 || ackTimeout > 120)
      problems.push(`ESP_${name}_ACK_TIMEOUT_SECONDS: 1 to 120`);
    const probeTimeout = Number(value('PROBE_TIMEOUT_SECONDS') ?? 5);
    if (!Number.isInteger(probeTimeout) || probeTimeout < 1 || probeTimeout > 60)
      problems.push(`ESP_${name}_PROBE_TIMEOUT_SECONDS: 1 to 60`);
    if (!builtIn) {
      for (const required of ['CERT', 'ASP_ID', 'ASP_PFX']) {
        if (!value(required)) problems.push(`ESP_${name}_${required}: required with ESP_${name}_URL`);
      }
    }
    const pfx = value('ASP_PFX');
    esps[name.toLowerCase()] = {
      name: name.toLowerCase(),
      url,
      version: version === '3.2' ? '3.2' : '2.1',
      ...(version === '3.2' && authUrl ? { authUrl } : {}),
      ackTimeoutSeconds: ackTimeout,
      probeTimeoutSeconds: probeTimeout,
      aspId: value('ASP_ID') ?? 'ESIGN-SANDBOX-ASP',
      certificatePem: builtIn ? undefined : pemOrFile(`ESP_${name}_CERT`, value('CERT'), problems),
      aspPfx: builtIn || !pfx ? undefined : { path: path.resolve(pfx), password: source[`ESP_${name}_ASP_PFX_PASSWORD`] ?? '' },
      timeoutSeconds: timeout,
      builtIn,
    };
  }
  return esps;
}

/** `ESP_GROUP_<NAME>`: an ordered list of ESP names (comma-separated) a session's `backend` may name as `<name>`. */
export const ESP_GROUP = /^ESP_GROUP_([A-Z0-9]+)$/;

/** The most ESPs one backend (a group or a list) may name: each is tried at most once per attempt. */
export const MAX_ESPS_PER_BACKEND = 5;

/**
 * The ESP groups, by name in lower case: each member a configured ESP, at most MAX_ESPS_PER_BACKEND, none twice,
 * and no group named as an ESP is (the backend would be ambiguous).
 */
export function espGroups(
  source: NodeJS.ProcessEnv,
  esps: Record<string, EspConfig>,
  problems: string[],
): Record<string, string[]> {
  const groups: Record<string, string[]> = {};
  for (const [key, raw] of Object.entries(source)) {
    const name = ESP_GROUP.exec(key)?.[1]?.toLowerCase();
    if (!name) continue;
    const members = (raw ?? '')
      .split(',')
      .map((member) => member.trim().toLowerCase())
      .filter(Boolean);
    if (Object.hasOwn(esps, name)) problems.push(`${key}: ${name} is already an ESP's name`);
    if (members.length === 0 || members.length > MAX_ESPS_PER_BACKEND)
      problems.push(`${key}: 1 to ${MAX_ESPS_PER_BACKEND} ESP names, comma-separated, in the order they are tried`);
    if (new Set(members).size !== members.length) problems.push(`${key}: an ESP is named twice`);
    for (const member of members) {
      if (!Object.hasOwn(esps, member))
        problems.push(`${key}: ${member} is not a configured ESP (ESP_${member.toUpperCase()}_URL)`);
    }
    groups[name] = members;
  }
  return groups;
}

/** PEM text as given, or the contents of the file it names. */
function pemOrFile(variable: string, value: string | undefined, problems: string[]): string | undefined {
  if (!value) return undefined;
  if (value.includes('-----BEGIN CERTIFICATE-----')) return value;
  try {
    const text = readFileSync(path.resolve(value), 'utf8');
    if (text.includes('-----BEGIN CERTIFICATE-----')) return text;
    problems.push(`${variable}: ${value} holds no PEM certificate`);
  } catch {
    problems.push(`${variable}: PEM text, or a readable file holding it (${value} cannot be read)`);
  }
  return undefined;
}
