/**
 * @module external-content/address-policy
 * Which addresses the image proxy may connect to. By default only globally routable
 * unicast addresses: a signed URL is still chosen by whoever sent the message, and
 * without this check it would reach the server's loopback services, the private
 * network and cloud metadata endpoints (169.254.169.254) with the server's position
 * on the network. Every address a name resolves to is checked, and the connection is
 * made to a checked address (src/external-content/fetch-image.ts), so a name cannot
 * switch to an internal address between check and connect.
 */
import { lookup as dnsLookup } from "node:dns";
import { BlockList, isIP, isIPv4, type LookupFunction } from "node:net";

/** May the proxy connect to `address` (an IP literal of `family`)? */
export type AddressPolicy = (address: string, family: 4 | 6) => boolean;

/** IANA's special-purpose IPv4 ranges (RFC 6890 and successors) that are not global unicast. */
const IPV4_BLOCKED: readonly (readonly [string, number])[] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
];

/** The same for IPv6; IPv4-mapped and NAT64 addresses are judged by the IPv4 address they carry. */
const IPV6_BLOCKED: readonly (readonly [string, number])[] = [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 23],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];

const blocked = new BlockList();
for (const [network, prefix] of IPV4_BLOCKED) blocked.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of IPV6_BLOCKED) blocked.addSubnet(network, prefix, "ipv6");

/** The eight 16-bit groups of an IPv6 literal (an embedded dotted IPv4 tail allowed), or null. */
function ipv6Groups(address: string): number[] | null {
  let text = address.toLowerCase();
  const zone = text.indexOf("%");
  if (zone !== -1) text = text.slice(0, zone);
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (tail !== undefined) {
    if (!isIPv4(tail)) return null;
    const [a, b, c, d] = tail.split(".").map(Number) as [number, number, number, number];
    text = `${text.slice(0, -tail.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string): number[] => (part === "" ? [] : part.split(":").map((g) => Number.parseInt(g, 16)));
  const head = parse(halves[0] ?? "");
  const rest = halves.length === 2 ? parse(halves[1] ?? "") : [];
  const missing = 8 - head.length - rest.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return null;
  const groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  return groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** The IPv4 address an IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) address carries, or null. */
function embeddedIpv4(groups: readonly number[]): string | null {
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (!mapped && !nat64) return null;
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The default policy: globally routable unicast only. */
export const publicAddressesOnly: AddressPolicy = (address, family) => {
  if (family === 4) return isIPv4(address) && !blocked.check(address, "ipv4");
  const groups = ipv6Groups(address);
  if (groups === null) return false;
  const v4 = embeddedIpv4(groups);
  if (v4 !== null) return !blocked.check(v4, "ipv4");
  return !blocked.check(groups.map((g) => g.toString(16)).join(":"), "ipv6");
};

/** For tests and development against a local image server: loopback too, nothing else private. */
export const publicAndLoopbackAddresses: AddressPolicy = (address, family) => {
  const loopback = family === 4 ? address.startsWith("127.") : ipv6Groups(address)?.join(":") === "0:0:0:0:0:0:0:1";
  return loopback || publicAddressesOnly(address, family);
};

/**
 * A resolver for a connection that answers only addresses the policy allows, and
 * refuses the host (with `refuse(host)`) if any of its addresses is not: a name that
 * also resolves to an internal address is not connected to at all. Pass it as the
 * request's `lookup` with `agent: false`, so no pooled socket skips the check.
 */
export function checkedLookup(policy: AddressPolicy, refuse: (host: string) => Error): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (error, addresses) => {
      if (error) {
        callback(error, "");
        return;
      }
      const first = addresses[0];
      if (first === undefined || addresses.some((a) => !policy(a.address, a.family === 6 ? 6 : 4))) {
        callback(refuse(hostname), "");
        return;
      }
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Whether `host` (a URL's hostname, brackets removed) is an IP literal the policy
 * refuses. Node connects to a literal without calling lookup, so it is checked here.
 */
export function isRefusedLiteral(host: string, policy: AddressPolicy): boolean {
  const literal = isIP(host);
  return literal !== 0 && !policy(host, literal === 6 ? 6 : 4);
}
