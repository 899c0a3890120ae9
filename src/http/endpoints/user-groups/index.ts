/**
 * @module http/endpoints/user-groups
 * User group endpoints: create, list, edit, deactivate, members, subgroups.
 */
import type { Endpoint } from "../../endpoint.js";
import createGroup from "./create-group.js";
import deactivateGroup from "./deactivate-group.js";
import getGroups from "./get-groups.js";
import { getMembersEndpoint, isMemberEndpoint, updateMembersEndpoint } from "./members.js";
import { getSubgroupsEndpoint, updateSubgroupsEndpoint } from "./subgroups.js";
import updateGroup from "./update-group.js";

export const USER_GROUP_ENDPOINTS: readonly Endpoint[] = [
  createGroup,
  getGroups,
  updateGroup,
  deactivateGroup,
  updateMembersEndpoint,
  getMembersEndpoint,
  isMemberEndpoint,
  updateSubgroupsEndpoint,
  getSubgroupsEndpoint,
];
