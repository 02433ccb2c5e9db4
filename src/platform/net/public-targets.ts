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
] as const)
  BLOCKED.addSubnet(network, prefix, 'ipv6');

export class BlockedTarget extends Error {
  override name = 'BlockedTarget';
}

/**
 * Node's BlockList judges an IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, `::ffff:7f00:1`) by the IPv4 rules, and an
 * IPv4 address by IPv4-mapped IPv6 rules too: so no `::ffff:0:0/96` rule here, which would block every IPv4 address.
 */
function blocked(address: string): boolean {
  return BLOCKED.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

/** Refuses (BlockedTarget) a URL whose host is, or resolves to, an address above. */
export async function assertPublicTarget(url: URL): Promise<void> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  const refused = addresses.find(blocked);
  if (refused) throw new BlockedTarget(`${url.host} resolves to ${refused}, which is not a public address`);
}

/**
 * A `lookup` for http.request that resolves the host and refuses it (BlockedTarget) when any address it resolves to
 * is one above, so the connection goes to the very address that was checked: a name that resolves to a public
 * address when a target is saved and to a private one when it is called (DNS rebinding) is refused then. Node does
 * not call `lookup` for an IP literal: check those with assertPublicTarget before the request.
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
    const refused = error ? undefined : addresses.find((entry) => blocked(entry.address));
    const failure =
      error ?? (refused ? new BlockedTarget(`${hostname} resolves to ${refused.address}, which is not a public address`) : null);
    const reply = callback as (...args: unknown[]) => void;
    if (failure) reply(failure, options.all ? [] : '', 0);
    else if (options.all) reply(null, addresses);
    else reply(null, addresses[0]!.address, addresses[0]!.family);
  });
};

/**
 * fetch for a URL given on someone else's say-so (an OCSP or CRL address in an uploaded certificate): the target's
 * addresses are checked where the connection is made (an IP literal before it), so a name that resolves to a
 * private address by then is refused. undici's own fetch, since Node's global fetch takes no `lookup`.
 */
export async function fetchPublicOnly(url: URL, init: UndiciRequestInit): Promise<UndiciResponse> {
  if (isIP(url.hostname.replace(/^\[|\]$/g, ''))) await assertPublicTarget(url);
  return undiciFetch(url, { ...init, dispatcher: publicOnlyDispatcher });
}

const publicOnlyDispatcher = new UndiciAgent({ connect: { lookup: publicOnlyLookup } });
