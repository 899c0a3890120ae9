/**
 * The one guarded writer of response heads (src/http/response-head.ts): no field name
 * that is not a token and no value with CR, LF, NUL or another control character
 * reaches either listener; such a reply becomes a 500 logged as a bug (issue 26,
 * item 1: a tus `filetype` with CRLF injected `Service-Worker-Allowed: /`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  guardReply,
  isHeaderName,
  isHeaderValue,
  responseHead,
  UnsafeHeaderError,
} from "../../src/http/response-head.js";
import type { Reply } from "../../src/http/respond.js";
import { basicAuth, startServer, type TestServer } from "../support/http.js";
import { raw } from "./uploads/support.js";

describe("header fields", () => {
  it("takes tokens as names and visible text, spaces and tabs as values", () => {
    for (const name of ["Content-Type", "X-Request-Id", "ETag", "a!#$%&'*+-.^_`|~9"])
      expect(isHeaderName(name), name).toBe(true);
    for (const name of ["", "Bad Name", "X:Y", "X\r\nY", "Ünïcode", "(x)", "a\u0000"])
      expect(isHeaderName(name), JSON.stringify(name)).toBe(false);
    for (const value of ["", "text/plain; charset=utf-8", 'attachment; filename="a b.txt"', "a\tb", "caf\u00e9"])
      expect(isHeaderValue(value), value).toBe(true);
    for (const value of ["a\r\nB: c", "a\nb", "a\rb", "a\u0000b", "a\u0007b", "a\u007fb", "a\u001bb"])
      expect(isHeaderValue(value), JSON.stringify(value)).toBe(false);
  });

  it("builds the head from the type, the reply's fields and the extra ones, in that order", () => {
    const reply: Reply = { status: 200, body: "{}", headers: [["ETag", '"x"']] };
    expect(responseHead(reply, [["X-Request-Id", "r1"]], "application/json")).toEqual({
      status: 200,
      fields: [
        ["Content-Type", "application/json"],
        ["ETag", '"x"'],
        ["X-Request-Id", "r1"],
      ],
    });
    expect(responseHead({ status: 204, body: "", contentType: "" }, [], "application/json").fields).toEqual([]);
  });

  it("refuses a control character in the type, a field or an extra field, and a bad name", () => {
    const bad: [Reply, [string, string][]][] = [
      [{ status: 200, body: "", contentType: "text/html\r\nService-Worker-Allowed: /" }, []],
      [{ status: 200, body: "", headers: [["Content-Disposition", "inline\r\nX: y"]] }, []],
      [{ status: 200, body: "" }, [["Location", "/a\u0000b"]]],
      [{ status: 200, body: "" }, [["X Y", "z"]]],
      [{ status: 2000, body: "" }, []],
    ];
    for (const [reply, extra] of bad)
      expect(() => responseHead(reply, extra, "application/json")).toThrow(UnsafeHeaderError);
  });

  it("turns a reply with an unsafe field into a 500 that carries nothing of it, logged as a bug", () => {
    const logged: string[] = [];
    const out = guardReply(
      {
        status: 200,
        body: "secret",
        contentType: "text/plain\nX-Evil: 1",
        headers: [["Content-Disposition", "inline"]],
      },
      [
        ["X-Request-Id", "r1"],
        ["X-Bad", "a\rb"],
      ],
      "application/json",
      (message, error) => logged.push(`${message}: ${(error as Error).message}`),
    );
    expect(out.reply.status).toBe(500);
    expect(JSON.parse(String(out.reply.body))).toEqual({ result: "error", msg: "Internal server error" });
    expect(out.reply.headers ?? []).toEqual([]);
    expect(out.headers).toEqual([["X-Request-Id", "r1"]]);
    expect(logged).toEqual(['bug: reply 200 not sent: unsafe response header "Content-Type"']);
  });

  it("passes a safe reply through unchanged, logging nothing", () => {
    const reply: Reply = { status: 200, body: "{}" };
    const out = guardReply(reply, [["X-Request-Id", "r1"]], "application/json", () => expect.unreachable());
    expect(out.reply).toBe(reply);
    expect(out.headers).toEqual([["X-Request-Id", "r1"]]);
  });
});

describe("through a real server", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer();
    await s.server.listenCompat(0);
  });
  afterAll(() => s.close());

  it("a tus filetype with CR LF never splits the download's head", async () => {
    const alice = s.seed.alice;
    const tusHeaders = { Authorization: basicAuth(s.t.store.getUser(alice.id)), "Tus-Resumable": "1.0.0" };
    const data = Buffer.from("<script>alert(1)</script>");
    const filetype = Buffer.from("text/plain\r\nService-Worker-Allowed: /").toString("base64");
    const created = await raw(s, "POST", "/api/v1/tus", {
      headers: {
        ...tusHeaders,
        "Upload-Length": String(data.length),
        "Upload-Metadata": `filename ${Buffer.from("a.txt").toString("base64")},filetype ${filetype}`,
      },
    });
    // Refusing the type at creation would do as well; it must not come back as a header.
    if (created.status !== 201) {
      expect(created.status).toBe(400);
      return;
    }
    const location = String(created.headers["location"]);
    const patched = await raw(s, "PATCH", location, {
      headers: { ...tusHeaders, "Content-Type": "application/offset+octet-stream", "Upload-Offset": "0" },
      body: data,
    });
    expect(patched.status).toBe(200);
    const url = String(patched.json()["url"]);
    const download = await raw(s, "GET", url, { user: alice });
    expect(download.headers["service-worker-allowed"]).toBeUndefined();
    for (const [name, value] of Object.entries(download.headers)) {
      for (const v of Array.isArray(value) ? value : [value ?? ""])
        expect(isHeaderValue(v), `${name}: ${v}`).toBe(true);
    }
    expect([200, 500]).toContain(download.status);
  });
});
