/**
 * @module actions/drafts
 * Drafts kept on the server for the user's other clients (Zulip's zerver/lib/drafts.py).
 * Each is checked like Zulip's further_validated_draft_dict: content normalized like a
 * message's; a channel draft names exactly one channel the user may post to
 * (otherwise "Invalid channel ID"); a direct draft names valid, active users (stored
 * as the other participants, or the user alone for a note to self); an unaddressed
 * draft, or a direct one without recipients, keeps neither `to` nor topic and reads
 * back with type "". Every call is refused while the user has turned
 * enable_drafts_synchronization off.
 */
import { isSubscribed } from "../access.js";
import { userAudience } from "../events/audience.js";
import { BadRequestError, NotFoundError } from "../errors.js";
import { codePointPrefix, exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import { ROLE, type Draft, type DraftType, type User } from "../types.js";
import { MAX_TOPIC_LENGTH, normalizeContent, resolveRecipients } from "./send-message.js";
import { requireActiveUser } from "./users.js";

export interface DraftInput {
  readonly type: DraftType;
  readonly to: readonly number[];
  readonly topic: string;
  readonly content: string;
  /** UNIX seconds (fractions kept to the microsecond); now when absent. */
  readonly timestamp?: number;
}

/** Drafts one POST may create: far above what a client syncs at once, bounded before any work. */
export const MAX_DRAFTS_PER_REQUEST = 1000;
/** Drafts in the register response, newest first (Zulip's MAX_DRAFTS_IN_REGISTER_RESPONSE). */
export const MAX_DRAFTS_IN_REGISTER = 1000;

export const DRAFT_DOES_NOT_EXIST = "Draft does not exist";

/** The user, if they keep drafts on the server (Zulip's draft_endpoint). */
function requireSyncingUser(state: StoreState, userId: number): User {
  const user = requireActiveUser(state, userId);
  if (!state.settingsOf(user.id).enable_drafts_synchronization)
    throw new BadRequestError("User has disabled synchronizing drafts.");
  return user;
}

/** Zulip's truncate_topic: cut, not refused. */
function truncateTopic(topic: string): string {
  return exceedsCodePoints(topic, MAX_TOPIC_LENGTH) ? codePointPrefix(topic, MAX_TOPIC_LENGTH - 3) + "..." : topic;
}

/** Zulip's access_stream_by_id: an active channel of the realm whose content the user may read. */
function checkDraftChannel(state: StoreState, user: User, channelId: number): void {
  const channel = state.channels.get(channelId);
  const ok =
    channel !== undefined &&
    channel.realmId === user.realmId &&
    !channel.isArchived &&
    (channel.isWebPublic ||
      (!channel.inviteOnly && user.role !== ROLE.GUEST) ||
      isSubscribed(state, user.id, channel.id));
  if (!ok) throw new BadRequestError("Invalid channel ID");
}

type CheckedDraft = Omit<Draft, "id" | "userId">;

function checkDraft(state: StoreState, user: User, input: DraftInput): CheckedDraft {
  const content = normalizeContent(input.content);
  const raw = input.timestamp ?? state.now();
  if (!Number.isFinite(raw)) throw new BadRequestError("Invalid timestamp");
  const lastEditTime = Math.round(raw * 1e6) / 1e6;
  if (lastEditTime < 0) throw new BadRequestError("Timestamp must not be negative.");
  if (input.type === "stream") {
    const topic = truncateTopic(input.topic);
    if (topic.includes("\0")) throw new BadRequestError("Topic must not contain null bytes");
    if (input.to.length !== 1) throw new BadRequestError("Must specify exactly 1 channel ID for channel messages");
    checkDraftChannel(state, user, input.to[0]!);
    return { type: "stream", to: [input.to[0]!], topic, content, lastEditTime };
  }
  if (input.type === "private" && input.to.length > 0) {
    const participants = resolveRecipients(state, user, input.to);
    const others = participants.filter((id) => id !== user.id);
    return { type: "private", to: others.length > 0 ? others : [user.id], topic: "", content, lastEditTime };
  }
  return { type: "", to: [], topic: "", content, lastEditTime };
}

/** POST /drafts: all or none; IDs in submission order. */
export function createDrafts(state: StoreState, userId: number, inputs: readonly DraftInput[]): number[] {
  const user = requireSyncingUser(state, userId);
  if (inputs.length > MAX_DRAFTS_PER_REQUEST)
    throw new BadRequestError(`Too many drafts (limit: ${MAX_DRAFTS_PER_REQUEST})`);
  const checked = inputs.map((input) => checkDraft(state, user, input));
  if (checked.length === 0) return [];
  return state.write((ctx) => {
    const drafts: Draft[] = checked.map((c) => ({ id: state.allocate("nextDraftId"), userId: user.id, ...c }));
    for (const draft of drafts) state.tables.drafts.putSync(draft.id, draft);
    ctx.afterCommit(() => drafts.forEach((d) => state.indexDraft(d)));
    ctx.emit({ type: "drafts", op: "add", userId: user.id, drafts }, () => userAudience(user.id));
    return drafts.map((d) => d.id);
  });
}

function requireOwnDraft(state: StoreState, user: User, draftId: number): Draft {
  const draft = state.draftsByUser.get(user.id)?.get(draftId);
  if (!draft) throw new NotFoundError(DRAFT_DOES_NOT_EXIST);
  return draft;
}

/** PATCH /drafts/{id}: replaces the draft. */
export function editDraft(state: StoreState, userId: number, draftId: number, input: DraftInput): void {
  const user = requireSyncingUser(state, userId);
  const current = requireOwnDraft(state, user, draftId);
  const next: Draft = { id: current.id, userId: user.id, ...checkDraft(state, user, input) };
  state.write((ctx) => {
    state.tables.drafts.putSync(next.id, next);
    ctx.afterCommit(() => state.indexDraft(next));
    ctx.emit({ type: "drafts", op: "update", draft: next }, () => userAudience(user.id));
  });
}

/** DELETE /drafts/{id}. */
export function deleteDraft(state: StoreState, userId: number, draftId: number): void {
  const user = requireSyncingUser(state, userId);
  const current = requireOwnDraft(state, user, draftId);
  state.write((ctx) => {
    state.tables.drafts.removeSync(current.id);
    ctx.afterCommit(() => state.unindexDraft(user.id, current.id));
    ctx.emit({ type: "drafts", op: "remove", userId: user.id, draftId: current.id }, () => userAudience(user.id));
  });
}

/** The user's drafts, most recently edited first. */
function newestFirst(state: StoreState, userId: number): Draft[] {
  return [...(state.draftsByUser.get(userId)?.values() ?? [])].sort(
    (a, b) => b.lastEditTime - a.lastEditTime || b.id - a.id,
  );
}

/** GET /drafts. */
export function listDrafts(state: StoreState, userId: number): Draft[] {
  const user = requireSyncingUser(state, userId);
  return newestFirst(state, user.id);
}

/** register's `drafts`: empty while synchronization is off. */
export function registerDrafts(state: StoreState, userId: number): Draft[] {
  if (!state.settingsOf(userId).enable_drafts_synchronization) return [];
  return newestFirst(state, userId).slice(0, MAX_DRAFTS_IN_REGISTER);
}
