/**
 * @module actions/imported-invites
 * An invitation carried over by `parley import`, written as the export had it: its key
 * (so the link already mailed, or handed out, still opens the join page once the
 * realm is served again), creation and expiry times, status, role, channels and groups.
 * Nothing is mailed and no event is sent (the change set names it): the invitation is not new. Checked as one
 * record: the inviter, channels and groups belong to the realm, the role is one of
 * Zulip's, the key has the form of this server's keys and no other invitation holds it.
 */
import { BadRequestError } from "../errors.js";
import type { StoreState } from "../state.js";
import { ROLES, type Invite, type Role } from "../types.js";
import { isValidEmail } from "./users.js";

export type ImportedInvite = Omit<Invite, "id" | "realmId">;

/** generateConfirmationKey's form (Zulip's too: 24 lowercase letters and digits). */
const KEY = /^[a-z0-9]{24}$/;

export function importInvite(state: StoreState, realmId: number, input: ImportedInvite): Invite {
  if (!state.realms.has(realmId)) throw new BadRequestError("Invalid realm");
  if (state.users.get(input.invitedById)?.realmId !== realmId) throw new BadRequestError("Invalid inviter");
  if (!ROLES.includes(input.invitedAs as Role)) throw new BadRequestError("Invalid invited_as");
  if ((input.kind === "email") !== (input.email !== null) || (input.email !== null && !isValidEmail(input.email)))
    throw new BadRequestError("Invalid email");
  if (input.kind === "multiuse" && input.status === "used") throw new BadRequestError("Invalid status");
  if (!KEY.test(input.key) || state.inviteByKey.has(input.key)) throw new BadRequestError("Invalid confirmation key");
  if (input.channelIds.some((id) => state.channels.get(id)?.realmId !== realmId))
    throw new BadRequestError("Invalid channel");
  if (input.groupIds.some((id) => state.groups.get(id)?.realmId !== realmId))
    throw new BadRequestError("Invalid group");
  return state.write((ctx) => {
    const invite: Invite = {
      ...input,
      id: state.allocate("nextInviteId"),
      realmId,
      channelIds: [...input.channelIds],
      groupIds: [...input.groupIds],
    };
    state.tables.invites.putSync(invite.id, invite);
    ctx.changed({ kind: "invites", id: realmId, op: "added" });
    ctx.afterCommit(() => state.indexInvite(invite));
    return invite;
  });
}
