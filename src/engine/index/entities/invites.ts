/** @module index/entities/invites Invitations by ID and by confirmation key. */
import type { Invite } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class InviteIndex implements EntityIndex<Invite> {
  /** Every invitation (pending, used or revoked), by ID. */
  readonly byId = new Map<number, Invite>();
  /** Confirmation key -> invitation ID. */
  readonly byKey = new Map<string, number>();

  add(invite: Invite): void {
    this.byId.set(invite.id, invite);
    this.byKey.set(invite.key, invite.id);
  }

  clear(): void {
    this.byId.clear();
    this.byKey.clear();
  }
}
