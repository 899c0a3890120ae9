/** @module index/entities/attachments Uploaded files' records by ID and path, and each realm's upload space. */
import type { Attachment } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class AttachmentIndex implements EntityIndex<Attachment> {
  readonly byId = new Map<number, Attachment>();
  /** pathId -> attachment ID. */
  readonly byPath = new Map<string, number>();
  /** realmId -> bytes of every stored upload of the realm (Zulip's currently_used_upload_space_bytes). */
  readonly spaceByRealm = new Map<number, number>();
  /**
   * messageId -> IDs of the attachments whose claims name it: a deletion finds the
   * uploads of its messages without walking every upload of the server, per batch.
   */
  readonly byMessage = new Map<number, Set<number>>();

  add(attachment: Attachment): void {
    const previous = this.byId.get(attachment.id);
    const delta = attachment.size - (previous?.size ?? 0);
    if (previous) this.#unclaim(previous);
    for (const messageId of attachment.messageIds) {
      let claims = this.byMessage.get(messageId);
      if (claims === undefined) this.byMessage.set(messageId, (claims = new Set()));
      claims.add(attachment.id);
    }
    this.byId.set(attachment.id, attachment);
    this.byPath.set(attachment.pathId, attachment.id);
    this.spaceByRealm.set(attachment.realmId, (this.spaceByRealm.get(attachment.realmId) ?? 0) + delta);
  }

  remove(attachment: Attachment): void {
    const stored = this.byId.get(attachment.id);
    if (stored === undefined) return;
    this.byId.delete(attachment.id);
    this.#unclaim(stored);
    this.byPath.delete(attachment.pathId);
    this.spaceByRealm.set(attachment.realmId, (this.spaceByRealm.get(attachment.realmId) ?? 0) - attachment.size);
  }

  #unclaim(attachment: Attachment): void {
    for (const messageId of attachment.messageIds) {
      const claims = this.byMessage.get(messageId);
      if (claims === undefined) continue;
      claims.delete(attachment.id);
      if (claims.size === 0) this.byMessage.delete(messageId);
    }
  }

  clear(): void {
    this.byMessage.clear();
    this.byId.clear();
    this.byPath.clear();
    this.spaceByRealm.clear();
  }
}
