import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type TestServer } from "../support/http.js";

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => s.close());

describe("HTTP framework", () => {
  it("serves server_settings without auth and reports unknown parameters", async () => {
    const r = await s.call(null, "GET", "/server_settings", { zeta: "1", alpha: "2" });
    expect(r.status).toBe(200);
    expect(r.body["result"]).toBe("success");
    expect(r.body["zulip_feature_level"]).toBe(496);
    expect(r.body["zulip_version"]).toBe("12.0");
    expect(r.body["ignored_parameters_unsupported"]).toEqual(["alpha", "zeta"]);
  });

  it("answers a JSON 404 for unknown API paths", async () => {
    const r = await s.call(null, "GET", "/no/such/thing");
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ result: "error", msg: "Not Found", code: "BAD_REQUEST" });
  });

  it("answers 405 with Allow and allowed_methods", async () => {
    const r = await s.call(null, "DELETE", "/server_settings");
    expect(r.status).toBe(405);
    expect(r.headers.get("allow")).toBe("GET");
    expect(r.body).toEqual({ result: "error", msg: "Method Not Allowed", allowed_methods: ["GET"] });
  });
});
