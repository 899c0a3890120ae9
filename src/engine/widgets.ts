/**
 * @module widgets
 * Zulip's message widgets (`/poll`, `/todo`): the widget a message's content starts,
 * as the JSON Zulip stores in its first submessage (zerver/lib/widget.py), and the
 * checks POST /submessage applies to poll and todo events (zerver/lib/validator.py
 * validate_poll_data / validate_todo_data, with check_dict's messages).
 *
 * Both follow Python's text rules, not JavaScript's: str.strip and the regex `\s`
 * take Python's whitespace (\x1c-\x1f and \x85 included, \uFEFF not), lines split as
 * str.splitlines does, and the content is written as json.dumps writes it (", " and
 * ": " separators, non-ASCII escaped). In Python a bool is an int and a float is not,
 * so `true` passes an integer check and `1.0` fails one.
 */
import { BadRequestError } from "./errors.js";

/** Python's whitespace (str.isspace, and `\s` in a str pattern). */
const PY_SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const FIRST_TOKEN = new RegExp(`^[^${PY_SPACE}]*`);
const STRIP = new RegExp(`^[${PY_SPACE}]+|[${PY_SPACE}]+$`, "g");
/** What Zulip removes before an option or a task: an optional list marker and the spaces around it. */
const LIST_MARKER = new RegExp(`^[${PY_SPACE}]*[-*]?[${PY_SPACE}]*`);
/** str.splitlines' line boundaries. */
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

export type WidgetType = "poll" | "todo";

function pyStrip(text: string): string {
  return text.replace(STRIP, "");
}

function pySplitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(LINE_BREAK);
  // A final line break ends the last line; it does not start an empty one.
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Python's json.dumps with its defaults, for the strings, lists and objects a widget holds. */
export function pythonJsonDumps(value: unknown): string {
  if (typeof value === "string") {
    let out = '"';
    for (let i = 0; i < value.length; i++) {
      const unit = value.charCodeAt(i);
      const ch = value[i]!;
      if (ch === '"') out += '\\"';
      else if (ch === "\\") out += "\\\\";
      else if (ch === "\n") out += "\\n";
      else if (ch === "\r") out += "\\r";
      else if (ch === "\t") out += "\\t";
      else if (ch === "\b") out += "\\b";
      else if (ch === "\f") out += "\\f";
      // ensure_ascii: everything outside space..tilde as \uXXXX (astral characters as their two surrogates).
      else if (unit < 0x20 || unit > 0x7e) out += `\\u${unit.toString(16).padStart(4, "0")}`;
      else out += ch;
    }
    return `${out}"`;
  }
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(", ")}]`;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return String(value);
  if (value === null || value === undefined) return "null";
  const entries = Object.entries(value as Record<string, unknown>);
  return `{${entries.map(([k, v]) => `${pythonJsonDumps(k)}: ${pythonJsonDumps(v)}`).join(", ")}}`;
}

/** The lines after the command: the first (when not empty) is the title; the rest lose a list marker. */
function titleAndItems(rest: string): { title: string; items: string[] } {
  const lines = pySplitLines(rest);
  let title = "";
  if (lines.length > 0 && lines[0] !== "") title = pyStrip(lines.shift()!);
  const items: string[] = [];
  for (const line of lines) {
    const item = pyStrip(line).replace(LIST_MARKER, "");
    if (item.length > 0) items.push(item);
  }
  return { title, items };
}

/**
 * The widget submessage content a message's (normalized) content starts, or null:
 * Zulip's get_widget_data. The first word must be exactly `/poll` or `/todo`.
 */
export function widgetContentFor(content: string): string | null {
  const first = FIRST_TOKEN.exec(content)![0];
  if (first !== "/poll" && first !== "/todo") return null;
  const { title, items } = titleAndItems(content.slice(first.length));
  if (first === "/poll") {
    return pythonJsonDumps({ widget_type: "poll", extra_data: { question: title, options: items } });
  }
  const tasks = items.map((item) => {
    const cut = item.indexOf(": ");
    return cut < 0
      ? { task: pyStrip(item), desc: "" }
      : { task: pyStrip(item.slice(0, cut)), desc: pyStrip(item.slice(cut + 2)) };
  });
  return pythonJsonDumps({ widget_type: "todo", extra_data: { task_list_title: title, tasks } });
}

/** Zulip's get_widget_type: the widget_type of a widget submessage's content, if it names one. */
export function widgetTypeOf(content: string): unknown {
  try {
    const data: unknown = JSON.parse(content);
    if (data !== null && typeof data === "object" && !Array.isArray(data) && "widget_type" in data)
      return (data as Record<string, unknown>)["widget_type"];
  } catch {
    // Zulip ignores a widget it cannot read.
  }
  return undefined;
}

// ---- checking poll and todo events (Zulip's validator.py) ----

/** Stands for a JSON number written with a fraction or an exponent: a Python float. */
const FLOAT = Symbol("float");
/** The key of the object a float literal becomes before the second parse (no JSON text a client sends holds it). */
const FLOAT_KEY = "\u0000parley:float";
const FLOAT_KEY_JSON = "\\u0000parley:float";
const NUMBER = /-?\d+(\.\d+)?([eE][+-]?\d+)?/y;

/**
 * JSON.parse, with each number literal that has a fraction or exponent replaced by FLOAT
 * (JSON.parse reads `1.0` as the integer 1; orjson, as Zulip reads it, as a float).
 * Returns undefined for text that is not JSON.
 */
export function parseSubmessageJson(text: string): { value: unknown } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!/[.eE]/.test(text)) return { value };
  // Valid JSON: mark the float literals outside strings, then parse again.
  let marked = "";
  let floats = 0;
  for (let i = 0; i < text.length;) {
    const ch = text[i]!;
    if (ch === '"') {
      const end = stringEnd(text, i);
      marked += text.slice(i, end);
      i = end;
    } else if (ch === "-" || (ch >= "0" && ch <= "9")) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(text)![0];
      if (/[.eE]/.test(literal)) {
        marked += `{"${FLOAT_KEY_JSON}":${floats++}}`;
      } else marked += literal;
      i += literal.length;
    } else {
      marked += ch;
      i++;
    }
  }
  if (floats === 0) return { value };
  return { value: JSON.parse(marked, (_k, v: unknown) => (isFloatMark(v) ? FLOAT : v)) };
}

function isFloatMark(v: unknown): boolean {
  return v !== null && typeof v === "object" && !Array.isArray(v) && FLOAT_KEY in v;
}

/** The index just after the JSON string starting at `start`. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
  return i + 1;
}

type Check = (name: string, value: unknown) => void;

const checkString: Check = (name, value) => {
  if (typeof value !== "string") throw new BadRequestError(`${name} is not a string`);
};
const checkBool: Check = (name, value) => {
  if (typeof value !== "boolean") throw new BadRequestError(`${name} is not a boolean`);
};
/** Python's check_int: an int, and a bool is one. */
function intOf(name: string, value: unknown): number {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value !== "number" || !Number.isInteger(value)) throw new BadRequestError(`${name} is not an integer`);
  return value;
}
const intIn =
  (allowed: readonly number[]): Check =>
  (name, value) => {
    if (!allowed.includes(intOf(name, value))) throw new BadRequestError(`Invalid ${name}`);
  };
const intRange =
  (low: number, high: number): Check =>
  (name, value) => {
    const n = intOf(name, value);
    if (n < low) throw new BadRequestError(`${name} is too small`);
    if (n > high) throw new BadRequestError(`${name} is too large`);
  };

/** check_dict_only: the keys in order, each present and valid, then no other key. */
function checkDictOnly(name: string, data: Record<string, unknown>, keys: readonly (readonly [string, Check])[]) {
  for (const [key, check] of keys) {
    if (!(key in data)) throw new BadRequestError(`${key} key is missing from ${name}`);
    check(`${name}["${key}"]`, data[key]);
  }
  const extra = Object.keys(data).filter((k) => !keys.some(([key]) => key === k));
  if (extra.length > 0) throw new BadRequestError(`Unexpected arguments: ${extra.join(", ")}`);
}

/** Zulip's MAX_IDX: the highest option index and task key, matching its clients. */
export const MAX_WIDGET_INDEX = 1000;

/** The event's type after check_dict([("type", check_string)]). */
function eventType(name: string, data: unknown): { data: Record<string, unknown>; type: string } {
  if (data === null || typeof data !== "object" || Array.isArray(data))
    throw new BadRequestError(`${name} is not a dict`);
  const record = data as Record<string, unknown>;
  if (!("type" in record)) throw new BadRequestError(`type key is missing from ${name}`);
  checkString(`${name}["type"]`, record["type"]);
  return { data: record, type: record["type"] as string };
}

/** Zulip's validate_poll_data and validate_todo_data, by widget type; other widgets take anything. */
export function checkWidgetEvent(widgetType: unknown, value: unknown, isWidgetAuthor: boolean): void {
  if (widgetType === "poll") {
    const name = "poll data";
    const { data, type } = eventType(name, value);
    if (type === "vote")
      return checkDictOnly(name, data, [
        ["type", checkString],
        ["key", checkString],
        ["vote", intIn([1, -1])],
      ]);
    if (type === "question") {
      if (!isWidgetAuthor) throw new BadRequestError("You can't edit a question unless you are the author.");
      return checkDictOnly(name, data, [
        ["type", checkString],
        ["question", checkString],
      ]);
    }
    if (type === "new_option")
      return checkDictOnly(name, data, [
        ["type", checkString],
        ["option", checkString],
        ["idx", intRange(0, MAX_WIDGET_INDEX)],
      ]);
    throw new BadRequestError(`Unknown type for poll data: ${type}`);
  }
  if (widgetType === "todo") {
    const name = "todo data";
    const { data, type } = eventType(name, value);
    if (type === "new_task")
      return checkDictOnly(name, data, [
        ["type", checkString],
        ["key", intRange(0, MAX_WIDGET_INDEX)],
        ["task", checkString],
        ["desc", checkString],
        ["completed", checkBool],
      ]);
    if (type === "strike")
      return checkDictOnly(name, data, [
        ["type", checkString],
        ["key", checkString],
      ]);
    if (type === "new_task_list_title") {
      if (!isWidgetAuthor) throw new BadRequestError("You can't edit the task list title unless you are the author.");
      return checkDictOnly(name, data, [
        ["type", checkString],
        ["title", checkString],
      ]);
    }
    throw new BadRequestError(`Unknown type for todo data: ${type}`);
  }
}
