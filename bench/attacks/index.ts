/**
 * @module bench/attacks/index
 * The attacks `npm run bench:attacks` (or `bench:worst -- --attacks`) runs, in this
 * order. An attack is a file of this folder exporting `attack: Attack` (types.ts);
 * add it here.
 */
import type { Attack } from "./types.js";
import { attack as compatBody } from "./compat-body.js";
import { attack as eventQueues } from "./event-queues.js";
import { attack as joinPage } from "./join-page.js";
import { attack as slowPosts, fromManyAddresses as slowPostsUncapped } from "./slow-posts.js";

export const ATTACKS: readonly Attack[] = [eventQueues, compatBody, slowPosts, slowPostsUncapped, joinPage];
