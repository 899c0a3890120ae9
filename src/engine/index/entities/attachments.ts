/** @module index/entities/attachments Uploaded files' records by ID and path, and each realm's upload space. */
import type { Attachment } from "../../types.js";
import type { EntityIndex } from "./entity-index.js";

export class AttachmentIndex implements EntityIndex<Attachment> {
  readonly byId = new Map<number, Attachment>();
  /** pathId -> attachment ID. */
  readonly byPath = new Map<string, number>();
  /** realmId -> bytes of every stored upload of the realm (Zulip's currently_used_upload_space_bytes). */
  readonly spaceByRealm = new Map<number, number>();

  add(attachment: Attachment): void {
    const previous = this.byId.get(attachment.id);
    const delta = attachment.size - (previous?.size ?? 0);
    this.byId.set(attachment.id, attachment);
    this.byPath.set(attachment.pathId, attachment.id);
    this.spaceByRealm.set(attachment.realmId, (this.spaceByRealm.get(attachment.realmId) ?? 0) + delta);
  }

  remove(attachment: Attachment): void {
    if (!this.byId.delete(attachment.id)) return;
    this.byPath.delete(attachment.pathId);
    this.spaceByRealm.set(attachment.realmId, (this.spaceByRealm.get(attachment.realmId) ?? 0) - attachment.size);
  }

  clear(): void {
    this.byId.clear();
    this.byPath.clear();
    this.spaceByRealm.clear();
  }
}
