/** The image proxy's default address policy: globally routable unicast only, however the address is written. */
import { describe, expect, it } from "vitest";
import { publicAddressesOnly, publicAndLoopbackAddresses } from "../../src/external-content/index.js";

const family = (address: string): 4 | 6 => (address.includes(":") ? 6 : 4);

describe("publicAddressesOnly", () => {
  it.each([
    "127.0.0.1",
    "127.8.9.10",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "192.0.2.10",
    "198.18.0.1",
    "::1",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "fd12:3456::1",
    "ff02::1",
    "2001:db8::1",
    // IPv4 written inside IPv6: mapped, in hex groups, and through NAT64.
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:10.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::169.254.169.254",
    // Not addresses at all.
    "localhost",
    "1:2:3",
    "::1::2",
  ])("refuses %s", (address) => {
    expect(publicAddressesOnly(address, family(address))).toBe(false);
  });

  it.each([
    "8.8.8.8",
    "93.184.215.14",
    "172.32.0.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "64:ff9b::808:808",
    "::ffff:8.8.8.8",
  ])("allows %s", (address) => {
    expect(publicAddressesOnly(address, family(address))).toBe(true);
  });

  it("the test policy adds loopback and nothing else", () => {
    expect(publicAndLoopbackAddresses("127.0.0.1", 4)).toBe(true);
    expect(publicAndLoopbackAddresses("::1", 6)).toBe(true);
    expect(publicAndLoopbackAddresses("10.0.0.1", 4)).toBe(false);
    expect(publicAndLoopbackAddresses("169.254.169.254", 4)).toBe(false);
  });
});
