import { describe, expect, it } from "vitest";
import { authenticate, subdomainOf } from "../../src/http/auth.js";
import { tempStore } from "../support/temp-store.js";

describe("subdomainOf (Zulip's get_subdomain_from_hostname)", () => {
  it("takes the subdomain only from SUB.<external host> or SUB.localhost", () => {
    expect(subdomainOf("acme.chat.example.com", "chat.example.com")).toBe("acme");
    expect(subdomainOf("ACME.chat.example.com:443", "chat.example.com:443")).toBe("acme");
    expect(subdomainOf("acme.localhost:9991", "chat.example.com")).toBe("acme");
  });

  it("maps every other host to the root realm, never to its first label", () => {
    for (const host of [
      "other.evil.com",
      "evilchat.example.com",
      "acme.chat.example.com.evil.com",
      "chat.example.com",
      "chat.example.com:8443",
      "localhost",
      "127.0.0.1:9991",
      "[::1]:9991",
      "",
    ]) {
      expect(subdomainOf(host, "chat.example.com")).toBe("");
    }
  });
});

describe("authenticate", () => {
  it("checks every request against the store, even with a header it has already decoded", () => {
    const t = tempStore();
    try {
      const { owner } = t.store.createRealm({
        subdomain: "",
        name: "T",
        owner: { email: "o@t.dev", fullName: "Olive" },
      });
      const header = (key: string) => "Basic " + Buffer.from(`o@t.dev:${key}`).toString("base64");
      const first = header(t.store.getUser(owner.id).apiKey);
      expect(authenticate(t.store, first, "localhost", "localhost").user.id).toBe(owner.id);
      expect(authenticate(t.store, first, "localhost", "localhost").user.id).toBe(owner.id);
      const fresh = t.store.regenerateApiKey(owner.id);
      expect(() => authenticate(t.store, first, "localhost", "localhost")).toThrow("Invalid API key");
      expect(authenticate(t.store, header(fresh), "localhost", "localhost").user.id).toBe(owner.id);
      expect(() => authenticate(t.store, "Basic !!!", "localhost", "localhost")).toThrow(
        "Invalid authorization header",
      );
      expect(() => authenticate(t.store, "Bearer x", "localhost", "localhost")).toThrow("basic authentication");
    } finally {
      t.cleanup();
    }
  });
});
