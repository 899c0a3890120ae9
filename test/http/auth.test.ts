import { describe, expect, it } from "vitest";
import { subdomainOf } from "../../src/http/auth.js";

describe("subdomainOf (Zulip's get_subdomain_from_hostname)", () => {
  it("takes the subdomain only from SUB.<external host> or SUB.localhost", () => {
    expect(subdomainOf("acme.chat.example.com", "chat.example.com")).toBe("acme");
    expect(subdomainOf("ACME.chat.example.com:443", "chat.example.com:443")).toBe("acme");
    expect(subdomainOf("acme.localhost:9991", "chat.example.com")).toBe("acme");
  });

  it("maps every other host to the root realm, never to its first label", () => {
    for (const host of ["other.evil.com", "evilchat.example.com", "acme.chat.example.com.evil.com", "chat.example.com", "chat.example.com:8443", "localhost", "127.0.0.1:9991", "[::1]:9991", ""]) {
      expect(subdomainOf(host, "chat.example.com")).toBe("");
    }
  });
});
