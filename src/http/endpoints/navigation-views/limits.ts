/**
 * @module http/endpoints/navigation-views/limits
 * Worst inputs the engine's bounds on navigation views refuse (checked after stripping, so not schema bounds).
 */
import { MAX_NAVIGATION_FRAGMENT_LENGTH, MAX_NAVIGATION_NAME_LENGTH } from "../../../engine/index.js";
import type { WorstCase } from "../../endpoint-testing.js";

export function longName(others: Readonly<Record<string, string>>): WorstCase {
  return {
    label: "a name of 200,000 characters",
    params: () => ({ ...others, name: "x".repeat(200_000) }),
    status: 400,
    code: "BAD_REQUEST",
    msg: `name is too long (limit: ${MAX_NAVIGATION_NAME_LENGTH} characters)`,
  };
}

export const LONG_FRAGMENT: WorstCase = {
  label: "a fragment of 200,000 characters",
  params: () => ({ fragment: "x".repeat(200_000), is_pinned: "true", name: "n" }),
  status: 400,
  code: "BAD_REQUEST",
  msg: `fragment is too long (limit: ${MAX_NAVIGATION_FRAGMENT_LENGTH} characters)`,
};
