import dns from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import {
  Agent as UndiciAgent,
  fetch as undiciFetch,
  type RequestInit as UndiciRequestInit,
  type Response as UndiciResponse,
} from 'undici';

/**
 * Which addresses a request made on someone else's say-so (a URL in an uploaded certificate, a webhook target) may
 * reach. `public`: public addresses only. `public-or-loopback`: also this machine's loopback (127/8, ::1), for a
 * receiver on a developer's own machine; never private networks, link-local (cloud metadata at 169.254.169.254),
 * carrier-grade NAT (Alibaba's metadata at 100.100.100.200) or anything else below, in any spelling.
 */
export type TargetPolicy = 'public' | 'public-or-loopback';

/**
 * Not public: unspecified, private, carrier-grade NAT, loopback, link-local, IETF protocol assignments
 * (192.0.0.0/24), documentation and benchmarking ranges, multicast, reserved and broadcast; and their IPv6
 * counterparts (unique local fc00::/7 holds AWS's IPv6 metadata, fd00:ec2::254).
 */
const NOT_PUBLIC_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC_V4.addSubnet(network, prefix, 'ipv4');
const NOT_PUBLIC_V6 = new BlockList();
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC_V6.addSubnet(network, prefix, 'ipv6');

const LOOPBACK_V4 = new BlockList();
LOOPBACK_V4.addSubnet('127.0.0.0', 8, 'ipv4');

export class BlockedTarget extends Error {
  override name = 'BlockedTarget';
}

/** The 16 bytes of an IPv6 address (`::` and a dotted IPv4 tail included), or null. */
function ipv6Bytes(address: string): number[] | null {
  let text = address.replace(/%.*$/, '').toLowerCase();
  let tail: number[] = [];
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    tail = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const fill = halves.length === 2 ? 8 - head.length - rest.length : 0;
  const all = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...rest];
  if (all.length !== 8 || all.some((group) => !/^[0-9a-f]{1,4}$/.test(group))) return null;
  const bytes = all.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff]);
  if (dotted) bytes.splice(12, 4, ...tail);
  return bytes;
}

const startsWith = (bytes: number[], prefix: number[]) => prefix.every((byte, index) => bytes[index] === byte);
const dottedOf = (bytes: number[]) => bytes.join('.');

/**
 * The IPv4 address an IPv6 address carries to (IPv4-mapped, IPv4-compatible, SIIT, NAT64 64:ff9b::/96, 6to4), with
 * whether reaching it goes through a translator (then it must be public: a NAT64 gateway's loopback is not ours).
 * `untranslatable` for prefixes whose IPv4 part cannot be judged (Teredo, local-use NAT64 64:ff9b:1::/48).
 */
function embeddedIpv4(bytes: number[]): { v4: string; translated: boolean } | 'untranslatable' | null {
  const zeros = (count: number) => Array<number>(count).fill(0);
  if (startsWith(bytes, [...zeros(10), 0xff, 0xff])) return { v4: dottedOf(bytes.slice(12)), translated: false };
  if (startsWith(bytes, [...zeros(8), 0xff, 0xff, 0, 0])) return { v4: dottedOf(bytes.slice(12)), translated: true };
  // ::a.b.c.d (deprecated IPv4-compatible); :: and ::1 are judged as themselves.
  if (startsWith(bytes, zeros(12)) && (bytes[12]! | bytes[13]! | bytes[14]!) !== 0)
    return { v4: dottedOf(bytes.slice(12)), translated: false };
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, ...zeros(8)])) return { v4: dottedOf(bytes.slice(12)), translated: true };
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 1])) return 'untranslatable';
  if (startsWith(bytes, [0x20, 0x02])) return { v4: dottedOf(bytes.slice(2, 6)), translated: true };
  if (startsWith(bytes, [0x20, 0x01, 0, 0])) return 'untranslatable';
  return null;
}

/** Whether `address` (an IP literal as resolved or written; URL parsing has turned 2852039166 into dotted form) is refused. */
export function refusedAddress(address: string, policy: TargetPolicy): boolean {
  const family = isIP(address);
  if (family === 4) {
    if (policy === 'public-or-loopback' && LOOPBACK_V4.check(address, 'ipv4')) return false;
    return NOT_PUBLIC_V4.check(address, 'ipv4');
  }
  if (family !== 6) return true;
  const bytes = ipv6Bytes(address);
  if (!bytes) return true;
  const embedded = embeddedIpv4(bytes);
  if (embedded === 'untranslatable') return true;
  if (embedded) return refusedAddress(embedded.v4, embedded.translated ? 'public' : policy);
  if (policy === 'public-or-loopback' && startsWith(bytes, [...Array<number>(15).fill(0), 1])) return false;
  return NOT_PUBLIC_V6.check(address.replace(/%.*$/, ''), 'ipv6');
}

function refusal(host: string, address: string, policy: TargetPolicy): BlockedTarget {
  const allowed = policy === 'public' ? 'a public address' : 'a public or loopback address';
  return new BlockedTarget(`${host} resolves to ${address}, which is not ${allowed}`);
}

const bare = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

/** Refuses (BlockedTarget) a URL whose host is, or resolves to, an address the policy refuses. */
export async function assertPublicTarget(url: URL, policy: TargetPolicy = 'public'): Promise<void> {
  const host = bare(url);
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  const refused = addresses.find((address) => refusedAddress(address, policy));
  if (refused) throw refusal(url.host, refused, policy);
}

/**
 * A `lookup` for http.request that resolves the host and refuses it (BlockedTarget) when any address it resolves to
 * is refused by the policy, so the connection goes to the very address that was checked: a name that resolves to a
 * public address when a target is saved and to a private one when it is called (DNS rebinding) is refused then. Node
 * does not call `lookup` for an IP literal: check those with assertPublicTarget before the request.
 */
export function targetLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      const refused = error ? undefined : addresses.find((entry) => refusedAddress(entry.address, policy));
      const failure = error ?? (refused ? refusal(hostname, refused.address, policy) : null);
      const reply = callback as (...args: unknown[]) => void;
      if (failure) reply(failure, options.all ? [] : '', 0);
      else if (options.all) reply(null, addresses);
      else reply(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

export const publicOnlyLookup: LookupFunction = targetLookup('public');

/**
 * fetch for a URL given on someone else's say-so (an OCSP or CRL address in an uploaded certificate): the target's
 * addresses are checked where the connection is made (an IP literal before it), so a name that resolves to a
 * private address by then is refused. undici's own fetch, since Node's global fetch takes no `lookup`.
 */
export async function fetchPublicOnly(url: URL, init: UndiciRequestInit): Promise<UndiciResponse> {
  if (isIP(bare(url))) await assertPublicTarget(url);
  return undiciFetch(url, { ...init, dispatcher: publicOnlyDispatcher });
}

const publicOnlyDispatcher = new UndiciAgent({ connect: { lookup: publicOnlyLookup } });
