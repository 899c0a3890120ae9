/**
 * After a commit the write coordinator renews lmdb-js's read snapshot at the next turn of
 * the event loop, so that the first read of the next request (a PATCH's message record,
 * a GET after a send) does not pay for it. Once per turn however many commits, never
 * inside a write, and harmless after close.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { internals } from "../../src/engine/internal.js";
import { seedRealm, tempStore, type TempStore } from "../support/temp-store.js";

let t: TempStore;
let renewals: number;
let w: ReturnType<typeof seedRealm>;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

beforeEach(async () => {
  t = tempStore();
  w = seedRealm(t.store);
  await turn();
  renewals = 0;
  const meta = internals(t.store).tables.meta as unknown as { ensureReadTxn(): void };
  const ensure = meta.ensureReadTxn.bind(meta);
  meta.ensureReadTxn = () => {
    renewals++;
    ensure();
  };
});
afterEach(() => t.cleanup());

const send = (content: string) =>
  t.store.sendMessage({ senderId: w.alice.id, to: { type: "channel", channel: "general", topic: "t" }, content });

it("renews the read snapshot at the next turn after commits, once, and reads then see the last commit", async () => {
  const first = send("one").id;
  const second = send("two").id;
  expect(renewals).toBe(0);
  await turn();
  expect(renewals).toBe(1);
  const window = t.store.getMessageWindow(w.alice.id, { narrow: [], anchor: "newest", numBefore: 2, numAfter: 0 });
  expect(window.ids).toEqual([first, second]);
  await turn();
  expect(renewals).toBe(1);
});

it("does nothing once the store is closed", async () => {
  send("one");
  t.store.close();
  await turn();
  expect(renewals).toBe(0);
});
