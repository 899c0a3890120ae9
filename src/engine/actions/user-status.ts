/**
 * @module actions/user-status
 * User status (Zulip's zerver/lib/user_status.py and actions/user_status.py): a text of
 * at most 60 characters and an emoji (Unicode, the realm's custom emoji, or Zulip's
 * extra emoji, checked as reactions are), set by the user or, for a human user, by an
 * administrator. The deprecated `away` is the inverse of the presence_enabled setting:
 * setting it changes that setting (with its user_settings event), and status dicts
 * report `away: true` for users with presence off. A status once set stays as a record
 * (Zulip keeps the row), cleared fields as "".
 */
import { canAdminUser } from "../access.js";
import { realmAudience } from "../events/audience.js";
import { BadRequestError } from "../errors.js";
import { exceedsCodePoints } from "../limits.js";
import type { StoreState } from "../state.js";
import type { Reaction, User, UserStatusRecord } from "../types.js";
import { checkEmojiRequest, emojiData } from "./reactions.js";
import { changeOwnSettingInTxn, NOT_FOR_BOTS } from "./settings.js";
import { requireActiveUser } from "./users.js";

/** Zulip's UserStatus.MAX_STATUS_TEXT_LENGTH. */
export const MAX_STATUS_TEXT_LENGTH = 60;

/** What a client sends; absent fields are left as they are. */
export interface UserStatusInput {
  /** Deprecated: presence_enabled = !away. Not accepted for another user. */
  readonly away?: boolean | undefined;
  readonly statusText?: string | undefined;
  readonly emojiName?: string | undefined;
  readonly emojiCode?: string | undefined;
  readonly reactionType?: string | undefined;
}

/** A status as Zulip's format_user_status reports it: only what is set. */
export interface UserStatusView {
  readonly away?: true;
  readonly status_text?: string;
  readonly emoji_name?: string;
  readonly emoji_code?: string;
  readonly reaction_type?: string;
}

const REACTION_TYPES: readonly string[] = ["unicode_emoji", "realm_emoji", "zulip_extra_emoji"];

interface CheckedStatus {
  readonly away: boolean | undefined;
  readonly statusText: string | undefined;
  readonly emoji: { name: string; code: string; reactionType: Reaction["reactionType"] } | undefined;
}

/** Zulip's check_update_user_status, in its order. */
function checkStatus(state: StoreState, realmId: number, input: UserStatusInput): CheckedStatus {
  const statusText = input.statusText?.trim();
  if (statusText !== undefined && exceedsCodePoints(statusText, MAX_STATUS_TEXT_LENGTH))
    throw new BadRequestError(`status_text is too long (limit: ${MAX_STATUS_TEXT_LENGTH} characters)`);
  const { away, emojiName } = input;
  if (away === undefined && statusText === undefined && emojiName === undefined)
    throw new BadRequestError("Client did not pass any new values.");
  if (emojiName === undefined) {
    if (input.reactionType || input.emojiCode)
      throw new BadRequestError("Client must pass emoji_name if they pass either emoji_code or reaction_type.");
    return { away, statusText, emoji: undefined };
  }
  // An empty name clears the emoji.
  if (emojiName === "") return { away, statusText, emoji: { name: "", code: "", reactionType: "unicode_emoji" } };
  let { emojiCode: code, reactionType: type } = input;
  if (code === undefined || type === undefined) {
    const data = emojiData(state, realmId, emojiName);
    code ??= data.emojiCode;
    type ??= data.reactionType;
  }
  if (!REACTION_TYPES.includes(type)) throw new BadRequestError("Invalid emoji type.");
  const reactionType = type as Reaction["reactionType"];
  checkEmojiRequest(state, realmId, { emojiName, emojiCode: code, reactionType });
  return { away, statusText, emoji: { name: emojiName, code, reactionType } };
}

function writeStatus(state: StoreState, user: User, checked: CheckedStatus): void {
  const current = state.userStatuses.get(user.id);
  const next: UserStatusRecord = {
    userId: user.id,
    statusText: checked.statusText ?? current?.statusText ?? "",
    emojiName: checked.emoji?.name ?? current?.emojiName ?? "",
    emojiCode: checked.emoji?.code ?? current?.emojiCode ?? "",
    reactionType: checked.emoji?.reactionType ?? current?.reactionType ?? "unicode_emoji",
    timestamp: state.now(),
  };
  state.write((ctx) => {
    if (checked.away !== undefined) changeOwnSettingInTxn(state, ctx, user, "presence_enabled", !checked.away);
    state.tables.userStatus.putSync(user.id, next);
    ctx.afterCommit(() => state.indexUserStatus(next));
    const { away, statusText, emoji } = checked;
    ctx.emit(
      {
        type: "user_status",
        userId: user.id,
        ...(away === undefined ? {} : { away }),
        ...(statusText === undefined ? {} : { statusText }),
        ...(emoji === undefined ? {} : { emoji }),
      },
      () => realmAudience(state, user.realmId),
    );
  });
}

/** POST /users/me/status. */
export function updateOwnStatus(state: StoreState, userId: number, input: UserStatusInput): void {
  const user = requireActiveUser(state, userId);
  if (user.isBot) throw new BadRequestError(NOT_FOR_BOTS);
  writeStatus(state, user, checkStatus(state, user.realmId, input));
}

/**
 * Zulip's access_user_by_id (bots refused): "No such user" for a user of no realm of
 * the actor's or a bot, "User is deactivated", and for an administrative change
 * "Insufficient permission" unless the actor may administer the target.
 */
function accessUser(state: StoreState, actor: User, targetId: number, forAdmin: boolean): User {
  const target = state.users.get(targetId);
  if (!target || target.realmId !== actor.realmId || target.isBot) throw new BadRequestError("No such user");
  if (!target.isActive) throw new BadRequestError("User is deactivated");
  if (forAdmin && !canAdminUser(actor, target)) throw new BadRequestError("Insufficient permission");
  return target;
}

/** POST /users/{user_id}/status: an administrator sets a human user's status (no `away`). */
export function updateStatusFor(
  state: StoreState,
  actorId: number,
  targetId: number,
  input: Omit<UserStatusInput, "away">,
): void {
  const actor = requireActiveUser(state, actorId);
  if (actor.isBot) throw new BadRequestError(NOT_FOR_BOTS);
  const target = accessUser(state, actor, targetId, true);
  writeStatus(state, target, checkStatus(state, target.realmId, { ...input, away: undefined }));
}

function viewOf(state: StoreState, record: UserStatusRecord): UserStatusView {
  return {
    ...(state.settingsOf(record.userId).presence_enabled ? {} : { away: true }),
    ...(record.statusText ? { status_text: record.statusText } : {}),
    ...(record.emojiName
      ? { emoji_name: record.emojiName, emoji_code: record.emojiCode, reaction_type: record.reactionType }
      : {}),
  };
}

/** GET /users/{user_id}/status: {} for a user who never set one. */
export function userStatusOf(state: StoreState, viewerId: number, targetId: number): UserStatusView {
  const viewer = requireActiveUser(state, viewerId);
  const target = accessUser(state, viewer, targetId, false);
  const record = state.userStatuses.get(target.id);
  return record === undefined ? {} : viewOf(state, record);
}

/**
 * register's user_status: the realm's active users with a status record that says
 * something (text, emoji, or presence off), keyed by user ID.
 */
export function realmUserStatuses(state: StoreState, viewerId: number): Record<string, UserStatusView> {
  const viewer = requireActiveUser(state, viewerId);
  const out: Record<string, UserStatusView> = {};
  for (const record of state.userStatuses.values()) {
    const user = state.users.get(record.userId);
    if (!user || user.realmId !== viewer.realmId || !user.isActive) continue;
    const view = viewOf(state, record);
    if (Object.keys(view).length > 0) out[String(record.userId)] = view;
  }
  return out;
}
