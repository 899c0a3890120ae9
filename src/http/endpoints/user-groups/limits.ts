/**
 * @module http/endpoints/user-groups/limits
 * Caps on the lists and text one user group request may carry. Zulip bounds none of
 * these (a description is a TextField; member lists are as long as the body); here
 * each is checked before any lookup, and each is far above what a client sends:
 * a group of ten thousand users in one call, a thousand subgroups, a description as
 * long as a whole message (it is sent to every client of the realm on each change
 * and at register).
 */
import { BadRequestError, type GroupSettingValue } from "../../../engine/index.js";
import { j, p, ref } from "../../params.js";

/** User IDs in one list (members, add, delete, a setting's direct_members). */
export const MAX_GROUP_USER_IDS = 10_000;
/** Group IDs in one list (subgroups, add_subgroups, a setting's direct_subgroups, ...). */
export const MAX_GROUP_SUBGROUP_IDS = 1000;
/** Characters of a group description (Zulip's message length limit). */
export const MAX_GROUP_DESCRIPTION_LENGTH = 10_000;

export const userIdList = () => ref(p.json(j.intList(), { maxItems: MAX_GROUP_USER_IDS }), "userList");
export const groupIdList = () => ref(p.json(j.intList(), { maxItems: MAX_GROUP_SUBGROUP_IDS }), "groupList");
export const description = () => p.str({ maxLength: MAX_GROUP_DESCRIPTION_LENGTH });

/** A group-setting value's lists within the caps (`where` names it in the error, as params.ts does). */
export function checkSettingSize(where: string, value: GroupSettingValue): void {
  if (typeof value === "number") return;
  if (value.directMembers.length > MAX_GROUP_USER_IDS)
    throw new BadRequestError(`${where}["direct_members"] is too long (limit: ${MAX_GROUP_USER_IDS} items)`);
  if (value.directSubgroups.length > MAX_GROUP_SUBGROUP_IDS)
    throw new BadRequestError(`${where}["direct_subgroups"] is too long (limit: ${MAX_GROUP_SUBGROUP_IDS} items)`);
}
