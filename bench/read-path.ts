/**
 * @module bench/read-path
 * `node dist/bench/read-path.js [--scale 1m] [--data DIR] [--only REGEX] [--budget MS]`:
 * the read workloads of bench/workloads/engine.ts timed three ways with the peer run's
 * loop (bench/harness.ts): records (embedder API), IDs+flags only, and the server path
 * (ready message JSON). For quick before/after comparisons of read-path changes without
 * the PostgreSQL peer; workloads that change state are left out.
 *
 * Also the GET /messages handler itself, from parsed parameters to the body uWS is
 * handed, for the big channel's newest 100 and 1000: "first" with the window cache off
 * (every request computes the window and joins its JSON) and "kept" with it on (a
 * repeated request with nothing changed in between).
 */
import { parseArgs } from "node:util";
import { chooseDataset, ensureDataset, workingCopy } from "./dataset.js";
import { measure } from "./harness.js";
import { type Store } from "../src/engine/index.js";
import { openStore } from "../src/index.js";
import { internals } from "../src/engine/internal.js";
import type { AuthedEndpoint, AuthedContext } from "../src/http/endpoint.js";
import getMessages from "../src/http/endpoints/messages/get-messages.js";
import { parseParams, type ParamShape } from "../src/http/params.js";
import { JsonParts, ReadyReply, success } from "../src/http/respond.js";
import { MessageJsonCache } from "../src/http/views/message-cache.js";
import { WindowReplyCache } from "../src/http/views/window-cache.js";
import type { Manifest } from "../tools/generate/manifest.js";
import { engineWorkloads } from "./workloads/engine.js";

/** The GET /messages handler as the server runs it, up to the body handed to uWS. */
function handlerPath(
  store: Store,
  manifest: Manifest,
  numBefore: number,
  windowCacheBytes: number,
): () => Promise<Buffer> {
  const endpoint = getMessages as unknown as AuthedEndpoint<ParamShape>;
  const user = store.getUser(manifest.subjects.main);
  const ctx = {
    store,
    user,
    realm: internals(store).realms.get(user.realmId)!,
    messageJson: new MessageJsonCache(store),
    windows: new WindowReplyCache(store, windowCacheBytes),
  } as unknown as AuthedContext;
  const query = new Map([
    ["anchor", "newest"],
    ["num_before", String(numBefore)],
    ["num_after", "0"],
    ["narrow", JSON.stringify([{ operator: "channel", operand: manifest.generalChannelId }])],
  ]);
  return async () => {
    const data = await endpoint.handler(ctx, parseParams(endpoint.params, query).values);
    if (data instanceof ReadyReply) return data.body;
    const body = success(data as Record<string, unknown>, []).body;
    return body instanceof JsonParts ? body.joinedTransiently() : Buffer.from(body as string);
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      scale: { type: "string" },
      data: { type: "string" },
      only: { type: "string" },
      budget: { type: "string" },
    },
    strict: true,
  });
  const choice = chooseDataset(values.scale, values.data, "100k");
  const manifest = await ensureDataset(choice, false, (line) => process.stderr.write(line + "\n"));
  const work = workingCopy(choice.dir);
  const store = openStore(work.dir);
  const only = values.only ? new RegExp(values.only) : null;
  const budgetMs = Number(values.budget ?? 2000);
  const ms = (t: { medianMs: number; minMs: number } | null) =>
    t ? `${t.medianMs.toFixed(4)} (min ${t.minMs.toFixed(4)})` : "";
  try {
    for (const w of engineWorkloads(store, manifest)) {
      if (w.reset || w.appends || (only && !only.test(w.name))) continue;
      const records = await measure(() => (w.timed ? w.timed() : w.run()), { budgetMs, maxIterations: 500 });
      const window = w.window ? await measure(() => w.window!(), { budgetMs, maxIterations: 500 }) : null;
      const serve = w.serve ? await measure(() => w.serve!(), { budgetMs, maxIterations: 500 }) : null;
      console.log(
        `${w.name.padEnd(40)} records ${ms(records)}  ids+flags ${ms(window)}  server ${ms(serve)}  (ms, median (min))`,
      );
    }
    for (const numBefore of [100, 1000]) {
      for (const [label, bytes] of [
        ["first", 0],
        ["kept", 64 * 1024 * 1024],
      ] as const) {
        const name = `GET /messages handler ${numBefore}, ${label}`;
        if (only && !only.test(name)) continue;
        const run = handlerPath(store, manifest, numBefore, bytes);
        const size = (await run()).length;
        const t = await measure(run, { budgetMs, maxIterations: 500 });
        console.log(`${name.padEnd(40)} ${ms(t)} ms, median (min); ${Math.round(size / 1024)} KB`);
      }
    }
  } finally {
    store.close();
    work.cleanup();
  }
}

main().catch((error: unknown) => {
  console.error(`read-path: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exitCode = 1;
});
