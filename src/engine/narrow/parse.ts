/**
 * @module narrow/parse
 * Wire narrow (already JSON-decoded, still unknown) -> RawTerm[]. Checks only shape
 * and operand types, like Zulip's NarrowParameter; structural errors are BAD_REQUEST,
 * meaning errors (unknown operators, names) come later as BAD_NARROW.
 */
import { BadRequestError, clip } from "../errors.js";
import {
  exceedsCodePoints,
  MAX_NARROW_CHARS,
  MAX_NARROW_TERMS,
  MAX_OPERAND_ITEMS,
  MAX_OPERAND_LENGTH,
} from "../limits.js";
import type { RawTerm } from "./terms.js";

/** Operators whose operand is a string or an integer (a name/email or an ID). */
const STRING_OR_INT = new Set([
  "channel",
  "stream",
  "id",
  "sender",
  "group-pm-with",
  "group_pm_with",
  "dm-including",
  "dm-with",
  "with",
  "mentions",
]);
/** Operators whose operand is a string (comma-separated emails) or a list of user IDs. */
const STRING_OR_INT_LIST = new Set(["dm", "pm-with", "pm_with"]);

export function parseNarrow(value: unknown): RawTerm[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new BadRequestError("narrow is not a list");
  // Sizes first: nothing is resolved or evaluated for an oversized narrow.
  if (value.length > MAX_NARROW_TERMS)
    throw new BadRequestError(`narrow is too long (limit: ${MAX_NARROW_TERMS} terms)`);
  const terms = value.map((element, i) => checkSize(parseElement(element), i));
  let chars = 0;
  for (const t of terms) if (typeof t.operand === "string") chars += t.operand.length;
  if (chars > MAX_NARROW_CHARS)
    throw new BadRequestError(`narrow is too long (limit: ${MAX_NARROW_CHARS} characters of operands)`);
  return terms;
}

function checkSize(term: RawTerm, index: number): RawTerm {
  const { operand } = term;
  const where = `narrow[${index}]["operand"]`;
  if (typeof operand === "string" && exceedsCodePoints(operand, MAX_OPERAND_LENGTH)) {
    throw new BadRequestError(`${where} is too long (limit: ${MAX_OPERAND_LENGTH} characters)`);
  }
  if (Array.isArray(operand) && operand.length > MAX_OPERAND_ITEMS) {
    throw new BadRequestError(`${where} is too long (limit: ${MAX_OPERAND_ITEMS} items)`);
  }
  return term;
}

function parseElement(element: unknown): RawTerm {
  if (Array.isArray(element)) {
    if (element.length !== 2 || typeof element[0] !== "string" || typeof element[1] !== "string") {
      throw new BadRequestError("element is not a string pair");
    }
    return checkOperand({ operator: element[0], operand: element[1], negated: false });
  }
  if (typeof element !== "object" || element === null) throw new BadRequestError("dict or list required");
  const record = element as Record<string, unknown>;
  const operator = record["operator"];
  const operand = record["operand"];
  const negated = record["negated"] ?? false;
  if (operator === undefined || operator === null) throw new BadRequestError("operator is missing");
  if (operand === undefined || operand === null) throw new BadRequestError("operand is missing");
  if (typeof operator !== "string") throw new BadRequestError("operator is not a string");
  if (typeof negated !== "boolean") throw new BadRequestError("negated is not a boolean");
  if (typeof operand !== "string" && typeof operand !== "number" && !Array.isArray(operand)) {
    throw new BadRequestError(`Invalid operand for operator '${clip(operator)}'`);
  }
  return checkOperand({ operator, operand: operand as RawTerm["operand"], negated });
}

function checkOperand(term: RawTerm): RawTerm {
  const { operator, operand } = term;
  const bad = () => new BadRequestError(`Invalid operand for operator '${clip(operator)}'`);
  if (STRING_OR_INT.has(operator)) {
    if (typeof operand === "number" ? !Number.isInteger(operand) : typeof operand !== "string") throw bad();
  } else if (STRING_OR_INT_LIST.has(operator)) {
    if (Array.isArray(operand)) {
      if (!operand.every((x) => typeof x === "number" && Number.isInteger(x))) throw bad();
    } else if (typeof operand !== "string") throw bad();
  } else if (operator === "search") {
    if (typeof operand !== "string") throw bad();
    if (operand.trim() === "") throw new BadRequestError("operand cannot be blank");
  } else if (typeof operand !== "string") {
    throw bad();
  }
  return term;
}
