/**
 * `parley serve` signs external images in messages with the key its image proxy
 * verifies: CAMO_KEY, else one generated into DATA/secrets.json on first start and
 * kept, so image URLs stored in messages still verify after a restart.
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { basicAuth } from "../support/http.js";
import { killStartedProcesses, serveProcess, stopProcess } from "../support/serve-process.js";
import { seedRealm, tempStore } from "../support/temp-store.js";

afterAll(() => killStartedProcesses());

describe("parley serve and external images", () => {
  it("renders them through the proxy under a key generated once and kept across restarts", async () => {
    const t = tempStore();
    const { alice } = seedRealm(t.store);
    const auth = { Authorization: basicAuth(alice) };
    t.store.close();
    try {
      let serve = await serveProcess(t.dir);
      expect(existsSync(join(t.dir, "secrets.json"))).toBe(true);
      // The cloud metadata address: the proxy refuses it, but only after the signature holds.
      const url = "http://169.254.169.254/latest/meta-data/role.png";
      const sent = await fetch(`${serve.url}/api/v1/messages`, {
        method: "POST",
        headers: auth,
        body: new URLSearchParams({ type: "stream", to: "general", topic: "t", content: url }),
      });
      const id = ((await sent.json()) as { id: number }).id;
      const message = (await (await fetch(`${serve.url}/api/v1/messages/${id}`, { headers: auth })).json()) as {
        message: { content: string };
      };
      const src = /<img src="([^"]+)"/.exec(message.message.content)?.[1] ?? "";
      expect(src).toMatch(/^\/external_content\/[0-9a-f]{40}\/[0-9a-f]+$/);
      const refusal = {
        result: "error",
        code: "BAD_REQUEST",
        msg: "The image's host 169.254.169.254 is not a public address",
      };
      expect(await (await fetch(`${serve.url}${src}`)).json()).toEqual(refusal);

      await stopProcess(serve.child, "SIGTERM");
      serve = await serveProcess(t.dir);
      expect(await (await fetch(`${serve.url}${src}`)).json()).toEqual(refusal);
      await stopProcess(serve.child, "SIGTERM");
    } finally {
      rmSync(t.dir, { recursive: true, force: true });
    }
  });
});
