import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a request made on someone else's say-so (a URL in an uploaded certificate, a webhook target) must not
 * reach: loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, unspecified,
 * multicast, and their IPv6 counterparts.
 */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['::ffff:0:0', 96], // IPv4-mapped: judged as IPv4 below
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

export class BlockedTarget extends Error {
  override name = 'BlockedTarget';
}

function blocked(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return BLOCKED.check(mapped, 'ipv4');
  return BLOCKED.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** Refuses (BlockedTarget) a URL whose host is, or resolves to, an address above. */
export async function assertPublicTarget(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  const refused = addresses.find(blocked);
  if (refused) throw new BlockedTarget(`${url.host} resolves to ${refused}, which is not a public address`);
}
