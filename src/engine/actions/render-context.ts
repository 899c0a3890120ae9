/**
 * @module actions/render-context
 * The realm-scoped lookups a renderer gets for mentions and channel links.
 */
import { canSeeChannel } from "../access.js";
import type { RenderContext, RenderUser } from "../render.js";
import { nameKey, type StoreState } from "../state.js";
import type { User } from "../types.js";
import { findChannelByName } from "./lookups.js";
import { activeRealmEmoji } from "./realm-emoji.js";
import { realmEmojiUrl } from "../../emoji/realm.js";
import { attachmentForViewer } from "./attachments.js";
import { realmLinkifiers } from "./linkifiers.js";
import { compileLinkifier, type CompiledLinkifier } from "../linkifiers/linkifier.js";

export function renderContextFor(state: StoreState, sender: User): RenderContext {
  const realmId = sender.realmId;
  const asRender = (u: User): RenderUser => ({ id: u.id, fullName: u.fullName, email: u.email });
  const linkifiers = realmLinkifiers(state, realmId)
    .map(compileLinkifier)
    .filter((l): l is CompiledLinkifier => l !== null);
  return {
    realmUrl: "",
    linkifiers,
    findUsersByName(fullName) {
      const out: RenderUser[] = [];
      for (const id of state.usersByName.get(nameKey(realmId, fullName)) ?? []) {
        const u = state.users.get(id);
        if (u?.isActive) out.push(asRender(u));
      }
      return out;
    },
    findUserById(userId) {
      const u = state.users.get(userId);
      return u && u.realmId === realmId && u.isActive ? asRender(u) : undefined;
    },
    findChannelByName(name) {
      const channel = findChannelByName(state, realmId, name);
      return channel && canSeeChannel(state, sender, channel) ? { id: channel.id, name: channel.name } : undefined;
    },
    findRealmEmoji(name) {
      const emoji = activeRealmEmoji(state, realmId, name);
      return emoji ? realmEmojiUrl(realmId, emoji.fileName) : undefined;
    },
    findUpload(pathId) {
      const attachment = attachmentForViewer(state, sender, realmId, pathId);
      const image = attachment?.image;
      return image
        ? { contentType: attachment.contentType, width: image.width, height: image.height, animated: image.animated }
        : undefined;
    },
    findGroupByName(name) {
      const wanted = name.trim().toLowerCase();
      for (const g of state.groups.values()) {
        if (g.realmId === realmId && g.systemRole === null && !g.deactivated && g.name.toLowerCase() === wanted)
          return { id: g.id, name: g.name };
      }
      return undefined;
    },
  };
}
