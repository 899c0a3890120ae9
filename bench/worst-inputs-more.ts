/**
 * @module bench/worst-inputs-more
 * The worst inputs of the routes beyond messages, users and subscriptions: user groups
 * at their caps (10,000 members, 1000 subgroups), a full event queue (10,000 message
 * events in one GET /events), scheduled messages, drafts and snippets at their largest,
 * typing to the 10,000-subscriber channel, presence, settings, invites, playgrounds,
 * push devices, accounts. Run after the full /register (they add groups, drafts and
 * snippets it would carry). IDs that only the server knows (a created group, a queue)
 * are captured from the answers of unmeasured setup requests.
 */
import type { Manifest } from "../tools/generate/manifest.js";
import type { AddCase, Captured } from "./worst-inputs-case.js";

const form = (params: Record<string, unknown>) => {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) out.set(k, typeof v === "string" ? v : JSON.stringify(v));
  return Buffer.from(out.toString());
};
const x = (n: number, unit = "x") => unit.repeat(n);
const markdown = x(1000, "**b** _i_ ");
const none = Buffer.alloc(0);

/** A number the setup captured under `key` (the setup has run: a missing one is a bench bug). */
function id(ctx: Captured, key: string): number {
  const value = ctx[key];
  if (typeof value !== "number") throw new Error(`bench:worst: nothing captured as ${key}`);
  return value;
}
function text(ctx: Captured, key: string): string {
  const value = ctx[key];
  if (typeof value !== "string") throw new Error(`bench:worst: nothing captured as ${key}`);
  return value;
}
const keep = (key: string, field: string) => (reply: Record<string, unknown>, ctx: Captured) => {
  ctx[key] = reply[field];
};

/** One file in a multipart body, as a browser sends it. */
function multipart(
  field: string,
  filename: string,
  contentType: string,
  data: Buffer,
): { body: Buffer; headers: Record<string, string> } {
  const boundary = "----parleyWorstInputs7MA4YWxkTrZu0gW";
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`,
  );
  return {
    body: Buffer.concat([head, data, Buffer.from(`\r\n--${boundary}--\r\n`)]),
    headers: { "Content-Type": `multipart/form-data; boundary=${boundary}` },
  };
}

/** A PNG of noise just under Zulip's default 5 MiB emoji limit (it does not compress). */
async function noisePng(): Promise<Buffer> {
  const { default: sharp } = await import("sharp");
  const side = 1100;
  const pixels = Buffer.alloc(side * side * 4);
  let seed = 1;
  for (let i = 0; i < pixels.length; i++) pixels[i] = (seed = (seed * 1_103_515_245 + 12_345) >>> 0) >>> 24;
  return sharp(pixels, { raw: { width: side, height: side, channels: 4 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/**
 * Files: the largest upload (100 MiB, the default MAX_FILE_UPLOAD_SIZE) by form and by tus, its download, an emoji
 * image.
 */
export async function fileCases(add: AddCase, auth: { main: string; owner: string }): Promise<void> {
  const big = Buffer.alloc(100 * 1024 * 1024 - 1024, "p");
  const upload = multipart("file", "big.bin", "application/octet-stream", big);
  add("POST /user_uploads", "100 MiB file (accepted)", "/user_uploads", upload.body, { headers: upload.headers });
  const uploaded = {
    method: "POST",
    path: "/user_uploads",
    body: upload.body,
    headers: upload.headers,
    capture: keep("file", "url"),
  };
  add(
    "GET /user_uploads/:realm_id/:path_hash/:path_random/:filename",
    "download 100 MiB (accepted)",
    (ctx) => text(ctx, "file"),
    none,
    { root: true, prepare: [uploaded] },
  );
  add(
    "GET /user_uploads/:realm_id/:path_hash/:path_random/:filename",
    "temporary URL (accepted)",
    (ctx) => text(ctx, "file"),
    none,
    { prepare: [uploaded] },
  );
  const temporary = { method: "GET", body: none, capture: keep("temporary", "url") };
  add(
    "GET /user_uploads/download/:realm_id/:path_hash/:path_random/:filename",
    "download 100 MiB (accepted)",
    (ctx) => text(ctx, "file").replace("/user_uploads/", "/user_uploads/download/"),
    none,
    { root: true, prepare: [uploaded] },
  );
  add(
    "GET /user_uploads/temporary/:token/:filename",
    "100 MiB without credentials (accepted)",
    (ctx) => text(ctx, "temporary"),
    none,
    {
      root: true,
      auth: null,
      prepare: [
        { ...uploaded, auth: auth.main },
        { ...temporary, auth: auth.main, path: (ctx: Captured) => text(ctx, "file") },
      ],
    },
  );
  const tus = { "Tus-Resumable": "1.0.0" };
  const createTus = {
    method: "POST",
    path: "/tus",
    body: none,
    headers: {
      ...tus,
      "Upload-Length": String(big.length),
      "Upload-Metadata": `filename ${Buffer.from("big.bin").toString("base64")}`,
    },
    status: 201,
    capture: (_reply: Record<string, unknown>, ctx: Captured, headers: Record<string, string | string[] | undefined>) =>
      (ctx["tus"] = String(headers["location"]).replace("/api/v1", "")),
  };
  add("POST /tus", "100 MiB Upload-Length (accepted)", "/tus", none, { headers: createTus.headers });
  add("PATCH /tus/:upload_id", "100 MiB in one PATCH (accepted)", (ctx) => text(ctx, "tus"), big, {
    headers: { ...tus, "Upload-Offset": "0", "Content-Type": "application/offset+octet-stream" },
    prepare: [createTus],
    // Each send completes its upload: the next one needs a new one.
    undo: createTus,
  });
  add("HEAD /tus/:upload_id", "a new upload (accepted)", (ctx) => text(ctx, "tus"), none, {
    headers: tus,
    prepare: [createTus],
  });
  add("DELETE /tus/:upload_id", "a new upload (accepted)", (ctx) => text(ctx, "tus"), none, {
    headers: tus,
    prepare: [createTus],
    undo: createTus,
  });
  const noise = await noisePng();
  const png = multipart("file", "noise.png", "image/png", noise);
  // The first request makes the thumbnail (sharp, on the thread pool); later ones serve it.
  add(
    "GET /user_uploads/thumbnail/:realm_id/:path_hash/:path_random/:filename/:thumbnail_format",
    `of a ${(noise.length / 1024 / 1024).toFixed(1)} MiB PNG (accepted)`,
    (ctx) => `${text(ctx, "image").replace("/user_uploads/", "/user_uploads/thumbnail/")}/840x560.webp`,
    none,
    {
      root: true,
      prepare: [
        { method: "POST", path: "/user_uploads", body: png.body, headers: png.headers, capture: keep("image", "url") },
      ],
    },
  );
  add(
    "POST /realm/emoji/:emoji_name",
    `${(png.body.length / 1024 / 1024).toFixed(1)} MiB PNG (accepted)`,
    (_ctx, run) => `/realm/emoji/worst_${run + 1}`,
    png.body,
    { ...{ auth: auth.owner }, headers: png.headers },
  );
}

export function moreCases(
  add: AddCase,
  m: Manifest,
  auth: { main: string; owner: string; spares: readonly string[] },
): void {
  const general = m.generalChannelId;
  const owner = { auth: auth.owner };
  // Users 1..10,000 exist at every scale the bench generates.
  const users = (n: number) => Array.from({ length: n }, (_, i) => 1 + i);
  const groupBody = (name: string, members: number[]) => form({ name, description: "d", members });

  // User groups: a member list and a subgroup list at their caps.
  add(
    "POST /user_groups/create",
    "10,000 members (accepted)",
    "/user_groups/create",
    (_ctx, run) => groupBody(`worst-${run}`, users(10_000)),
    owner,
  );
  add(
    "POST /user_groups/create",
    "10,001 members (limit 10,000)",
    "/user_groups/create",
    groupBody("too-many", users(10_001)),
    owner,
  );
  // Setups shared by several inputs run once (`unless`), so that `--only` may pick any one of them.
  const emptyGroup = {
    method: "POST",
    path: "/user_groups/create",
    body: groupBody("worst-empty", []),
    capture: keep("emptyGroup", "group_id"),
    unless: "emptyGroup",
  };
  const emptyGroupPath = (ctx: Captured) => `/user_groups/${id(ctx, "emptyGroup")}/members`;
  add(
    "POST /user_groups/:user_group_id/members",
    "add 10,000 members (accepted)",
    emptyGroupPath,
    form({ add: users(10_000) }),
    {
      ...owner,
      prepare: [emptyGroup],
      undo: { method: "POST", body: form({ delete: users(10_000) }) },
    },
  );
  add(
    "POST /user_groups/:user_group_id/members",
    "remove 10,000 members (accepted)",
    emptyGroupPath,
    form({ delete: users(10_000) }),
    {
      ...owner,
      prepare: [emptyGroup, { method: "POST", body: form({ add: users(10_000) }) }],
      undo: { method: "POST", body: form({ add: users(10_000) }) },
    },
  );
  const fullGroup = {
    method: "POST",
    path: "/user_groups/create",
    body: groupBody("worst-full", users(10_000)),
    capture: keep("fullGroup", "group_id"),
    unless: "fullGroup",
  };
  add(
    "GET /user_groups/:user_group_id/members",
    "10,000 members (accepted)",
    (ctx) => `/user_groups/${id(ctx, "fullGroup")}/members`,
    none,
    { ...owner, prepare: [fullGroup] },
  );
  add(
    "GET /user_groups/:user_group_id/members/:user_id",
    "a member (accepted)",
    (ctx) => `/user_groups/${id(ctx, "fullGroup")}/members/5000`,
    none,
    { ...owner, prepare: [fullGroup] },
  );
  // 1000 small groups, created one request each (unmeasured), then added as subgroups at once.
  const subgroups = Array.from({ length: 1000 }, (_, i) => ({
    method: "POST",
    path: "/user_groups/create",
    body: groupBody(`worst-sub-${i}`, [100 + i]),
    capture: (reply: Record<string, unknown>, ctx: Captured) => {
      ctx["subgroups"] = [...((ctx["subgroups"] as number[] | undefined) ?? []), reply["group_id"]];
      if (i === 999) ctx["subgroupsMade"] = true;
    },
    unless: "subgroupsMade",
  }));
  const subgroupIds = (ctx: Captured) => ctx["subgroups"] as number[];
  const subgroupsPath = (ctx: Captured) => `/user_groups/${id(ctx, "fullGroup")}/subgroups`;
  add(
    "POST /user_groups/:user_group_id/subgroups",
    "add 1000 subgroups (accepted)",
    subgroupsPath,
    (ctx) => form({ add: subgroupIds(ctx) }),
    {
      ...owner,
      prepare: [fullGroup, ...subgroups],
      undo: { method: "POST", body: (ctx) => form({ delete: subgroupIds(ctx) }) },
    },
  );
  add("GET /user_groups/:user_group_id/subgroups", "1000 subgroups (accepted)", subgroupsPath, none, {
    ...owner,
    prepare: [fullGroup, ...subgroups, { method: "POST", body: (ctx) => form({ add: subgroupIds(ctx) }) }],
  });
  add("GET /user_groups", "every group, 1000+ (accepted)", "/user_groups", none, owner);
  add(
    "PATCH /user_groups/:user_group_id",
    "10,000-char description (accepted)",
    (ctx) => `/user_groups/${id(ctx, "fullGroup")}`,
    (_ctx, run) => form({ description: x(10_000 - 2, "é") + String(run + 1).padStart(2, "0") }),
    { ...owner, prepare: [fullGroup] },
  );
  let made = 0;
  const toDeactivate = {
    method: "POST",
    path: "/user_groups/create",
    body: () => groupBody(`worst-deactivate-${made++}`, users(10_000)),
    capture: keep("deactivate", "group_id"),
  };
  add(
    "POST /user_groups/:user_group_id/deactivate",
    "a group of 10,000 (accepted)",
    (ctx) => `/user_groups/${id(ctx, "deactivate")}/deactivate`,
    none,
    { ...owner, prepare: [toDeactivate], undo: toDeactivate },
  );

  // A full event queue: 10,000 message events (the queue's cap) answered at once.
  const dm = form({ type: "direct", to: [m.subjects.dmPartner], content: "queued" });
  add(
    "GET /events",
    "10,000 queued message events (accepted)",
    "/events",
    (ctx) => form({ queue_id: text(ctx, "queue"), last_event_id: -1, dont_block: true }),
    {
      prepare: [
        // Every GET passes last_event_id -1, so none acknowledges them (the unmeasured first one included).
        {
          method: "POST",
          path: "/register",
          body: form({ event_types: ["message"] }),
          capture: keep("queue", "queue_id"),
        },
        ...Array.from({ length: 10_000 }, () => ({ method: "POST", path: "/messages", body: dm })),
      ],
    },
  );
  // Each send deletes the queue: a new (empty) one is registered for the next.
  const newQueue = {
    method: "POST",
    path: "/register",
    body: form({ event_types: ["message"] }),
    capture: keep("queue", "queue_id"),
  };
  add("DELETE /events", "a queue (accepted)", "/events", (ctx) => form({ queue_id: text(ctx, "queue") }), {
    prepare: [newQueue],
    undo: newQueue,
  });
  add("DELETE /events", "64 KB queue_id", "/events", form({ queue_id: x(64 * 1024) }));

  // Typing to the 10,000-subscriber channel fans out to every subscriber's queues.
  add(
    "POST /typing",
    "start, 10,000-subscriber channel (accepted)",
    "/typing",
    form({ type: "stream", op: "start", stream_id: general, topic: "bench" }),
  );
  add("POST /typing", "1001 direct recipients", "/typing", form({ op: "start", to: users(1001) }));

  // Scheduled messages: the 10,000-character message, scheduled and edited.
  const later = Math.floor(Date.now() / 1000) + 30 * 86_400;
  const scheduled = form({
    type: "stream",
    to: String(general),
    topic: "bench",
    content: markdown,
    scheduled_delivery_timestamp: later,
  });
  add("POST /scheduled_messages", "10,000 chars of markdown (accepted)", "/scheduled_messages", scheduled);
  add(
    "POST /scheduled_messages",
    "40k-char content",
    "/scheduled_messages",
    form({
      type: "stream",
      to: String(general),
      topic: "bench",
      content: x(40_000),
      scheduled_delivery_timestamp: later,
    }),
  );
  // Small: the edit below brings its own 10,000 characters, and a delete does not depend on the size.
  const oneScheduled = {
    method: "POST",
    path: "/scheduled_messages",
    body: form({
      type: "stream",
      to: String(general),
      topic: "bench",
      content: "later",
      scheduled_delivery_timestamp: later,
    }),
    capture: keep("scheduled", "scheduled_message_id"),
  };
  add(
    "PATCH /scheduled_messages/:scheduled_message_id",
    "10,000 chars of markdown (accepted)",
    (ctx) => `/scheduled_messages/${id(ctx, "scheduled")}`,
    (_ctx, run) => form({ content: `${markdown.slice(0, -2)}${String(run + 1).padStart(2, "0")}` }),
    { prepare: [oneScheduled] },
  );
  add("GET /scheduled_messages", "every scheduled message (accepted)", "/scheduled_messages", none);
  add(
    "DELETE /scheduled_messages/:scheduled_message_id",
    "one (accepted)",
    (ctx) => `/scheduled_messages/${id(ctx, "scheduled")}`,
    none,
    { prepare: [oneScheduled], undo: oneScheduled },
  );

  // Drafts: the most one request may create, then listed, edited, deleted.
  const draft = (content: string) => ({
    type: "stream",
    to: [general],
    topic: "bench",
    content,
    timestamp: 1_700_000_000,
  });
  add(
    "POST /drafts",
    "1000 drafts (accepted)",
    "/drafts",
    form({ drafts: Array.from({ length: 1000 }, (_, i) => draft(`draft ${i}`)) }),
  );
  add(
    "POST /drafts",
    "1001 drafts (limit 1000)",
    "/drafts",
    form({ drafts: Array.from({ length: 1001 }, (_, i) => draft(`draft ${i}`)) }),
  );
  add("GET /drafts", "every draft, 4000 (accepted)", "/drafts", none);
  const oneDraft = {
    method: "POST",
    path: "/drafts",
    body: form({ drafts: [draft("one")] }),
    capture: (reply: Record<string, unknown>, ctx: Captured) => (ctx["draft"] = (reply["ids"] as number[])[0]),
  };
  add(
    "PATCH /drafts/:draft_id",
    "10,000-char content (accepted)",
    (ctx) => `/drafts/${id(ctx, "draft")}`,
    form({ draft: draft(x(10_000, "é")) }),
    { prepare: [oneDraft] },
  );
  add("DELETE /drafts/:draft_id", "one (accepted)", (ctx) => `/drafts/${id(ctx, "draft")}`, none, {
    prepare: [oneDraft],
    undo: oneDraft,
  });

  // Saved snippets.
  add(
    "POST /saved_snippets",
    "10,000-char content (accepted)",
    "/saved_snippets",
    form({ title: "t", content: x(10_000, "é") }),
  );
  add("GET /saved_snippets", "every snippet (accepted)", "/saved_snippets", none);
  const oneSnippet = {
    method: "POST",
    path: "/saved_snippets",
    body: form({ title: "t", content: "c" }),
    capture: keep("snippet", "saved_snippet_id"),
  };
  add(
    "PATCH /saved_snippets/:saved_snippet_id",
    "10,000-char content (accepted)",
    (ctx) => `/saved_snippets/${id(ctx, "snippet")}`,
    form({ content: x(10_000, "é") }),
    { prepare: [oneSnippet] },
  );
  add(
    "DELETE /saved_snippets/:saved_snippet_id",
    "one (accepted)",
    (ctx) => `/saved_snippets/${id(ctx, "snippet")}`,
    none,
    { prepare: [oneSnippet], undo: oneSnippet },
  );

  // Subscription properties: 1000 changes at once on the caller's own subscriptions.
  const mySubscriptions = {
    method: "GET",
    path: "/users/me/subscriptions",
    body: none,
    capture: (reply: Record<string, unknown>, ctx: Captured) =>
      (ctx["mine"] = (reply["subscriptions"] as { stream_id: number }[]).map((s) => s.stream_id)),
  };
  const changes = (ctx: Captured, run: number) => {
    const mine = ctx["mine"] as number[];
    return form({
      subscription_data: Array.from({ length: 1000 }, (_, i) => ({
        stream_id: mine[i % mine.length],
        property: "pin_to_top",
        value: run % 2 === 0,
      })),
    });
  };
  add(
    "POST /users/me/subscriptions/properties",
    "1000 changes (accepted)",
    "/users/me/subscriptions/properties",
    changes,
    { prepare: [mySubscriptions] },
  );
  add(
    "POST /users/me/subscriptions/properties",
    "1001 changes (limit 1000)",
    "/users/me/subscriptions/properties",
    form({
      subscription_data: Array.from({ length: 1001 }, () => ({
        stream_id: general,
        property: "pin_to_top",
        value: true,
      })),
    }),
  );

  add(
    "POST /user_topics",
    "2 KB topic",
    "/user_topics",
    form({ stream_id: general, topic: x(1000, "é"), visibility_policy: 1 }),
  );
  add("POST /user_topics", "mute the biggest topic (accepted)", "/user_topics", (_ctx, run) =>
    form({ stream_id: general, topic: m.bigTopic, visibility_policy: run % 2 === 0 ? 1 : 0 }),
  );

  // Presence: the realm's 10,000 users.
  add(
    "POST /users/me/presence",
    "active, with every user's presence (accepted)",
    "/users/me/presence",
    form({ status: "active", new_user_input: true, slim_presence: true }),
  );
  add("GET /realm/presence", "every user (accepted)", "/realm/presence", none);
  add("GET /users/:user_id_or_email/presence", "2 KB email", `/users/${x(2000)}@example.com/presence`, none);

  // Settings.
  add("PATCH /settings", "200 KB full_name", "/settings", form({ full_name: x(200_000) }));
  add("PATCH /settings", "every display setting (accepted)", "/settings", (_ctx, run) =>
    form({
      twenty_four_hour_time: run % 2 === 0,
      fluid_layout_width: run % 2 === 0,
      emojiset: "google",
      web_home_view: "inbox",
      default_language: "en",
    }),
  );
  add(
    "PATCH /realm/user_settings_defaults",
    "200 KB emojiset",
    "/realm/user_settings_defaults",
    form({ emojiset: x(200_000) }),
    owner,
  );
  add(
    "PATCH /realm/user_settings_defaults",
    "a default (accepted)",
    "/realm/user_settings_defaults",
    (_ctx, run) => form({ fluid_layout_width: run % 2 === 0 }),
    owner,
  );

  // Invites (no mail is sent by the bench server: it has no SMTP host).
  add(
    "POST /invites",
    "200 KB invitee_emails",
    "/invites",
    form({ invitee_emails: x(100_000, "a,"), stream_ids: [general] }),
    owner,
  );
  add(
    "POST /invites",
    "1001 stream_ids",
    "/invites",
    form({ invitee_emails: "new@example.com", stream_ids: Array.from({ length: 1001 }, (_, i) => i) }),
    owner,
  );
  add(
    "POST /invites/multiuse",
    "every channel (accepted)",
    "/invites/multiuse",
    form({ stream_ids: m.channelIds.slice(0, 1000) }),
    owner,
  );
  add("GET /invites", "every invite (accepted)", "/invites", none, owner);
  add("DELETE /invites/multiuse/:invite_id", "2000-digit ID", `/invites/multiuse/${x(2000, "9")}`, none, owner);
  add("DELETE /invites/:invite_id", "2000-digit ID", `/invites/${x(2000, "9")}`, none, owner);
  add("POST /invites/:invite_id/resend", "2000-digit ID", `/invites/${x(2000, "9")}/resend`, none, owner);

  add(
    "POST /realm/playgrounds",
    "200 KB url_template",
    "/realm/playgrounds",
    form({ name: "n", pygments_language: "py", url_template: x(200_000) }),
    owner,
  );
  add(
    "POST /realm/playgrounds",
    "10,000-char url_template (accepted)",
    "/realm/playgrounds",
    (_ctx, run) =>
      form({ name: `worst-${run}`, pygments_language: "py", url_template: `https://example.com/${x(9_900)}{code}` }),
    owner,
  );
  add("DELETE /realm/playgrounds/:playground_id", "2000-digit ID", `/realm/playgrounds/${x(2000, "9")}`, none, owner);
  add("GET /realm/emoji", "every emoji (accepted)", "/realm/emoji", none);
  add("DELETE /realm/emoji/:emoji_name", "2 KB name", `/realm/emoji/${x(2000)}`, none, owner);

  // Push devices.
  add("POST /register_client_device", "one (accepted)", "/register_client_device", none);
  add("POST /remove_client_device", "2000-digit ID", "/remove_client_device", form({ device_id: x(2000, "9") }));
  add(
    "POST /mobile_push/register",
    "200 KB push_key",
    "/mobile_push/register",
    form({ device_id: 1, push_key: x(200_000) }),
  );
  add(
    "POST /mobile_push/e2ee/test_notification",
    "2000-digit device_id",
    "/mobile_push/e2ee/test_notification",
    form({ device_id: x(2000, "9") }),
  );

  // Accounts: password hashing runs on the thread pool, not the loop.
  add(
    "POST /fetch_api_key",
    "unknown account (decoy hash)",
    "/fetch_api_key",
    form({ username: "nobody@example.com", password: "x" }),
    { auth: null },
  );
  add(
    "POST /fetch_api_key",
    "200 KB password",
    "/fetch_api_key",
    form({ username: m.subjectEmails.main, password: x(200_000) }),
    { auth: null },
  );
  add("POST /jwt/fetch_api_key", "200 KB token", "/jwt/fetch_api_key", form({ token: x(200_000) }), { auth: null });
  // Regenerating changes the caller's key: each send is by another user.
  add("POST /users/me/api_key/regenerate", "one (accepted)", "/users/me/api_key/regenerate", none, {
    auth: (_ctx, run) => auth.spares[run + 1]!,
  });

  add("GET /attachments", "every attachment (accepted)", "/attachments", none);
  add("DELETE /attachments/:attachment_id", "2000-digit ID", `/attachments/${x(2000, "9")}`, none);
}
