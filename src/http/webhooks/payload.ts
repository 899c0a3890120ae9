/**
 * @module http/webhooks/payload
 * Reading a service's JSON payload field by field, as Zulip's WildValue does: every
 * access names its path, and a missing field or one of the wrong type is a 400 that
 * says which (`payload["sender"]["login"] is missing`) instead of a crash.
 */
import { BadRequestError } from "../../engine/index.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** A value inside a payload, with the path it was reached by. */
export class Wild {
  constructor(
    readonly path: string,
    readonly value: unknown,
  ) {}

  /** Parses a request body as JSON; null when it is not JSON. */
  static parse(text: string, path = "payload"): Wild | null {
    try {
      return new Wild(path, JSON.parse(text) as Json);
    } catch {
      return null;
    }
  }

  #dict(): Record<string, unknown> {
    if (!isObject(this.value)) throw new BadRequestError(`${this.path} is not a dict`);
    return this.value;
  }

  /** The field `key`; a 400 when this is not an object or has no such field. */
  get(key: string): Wild {
    const dict = this.#dict();
    if (!Object.hasOwn(dict, key)) throw new BadRequestError(`${this.path}["${key}"] is missing`);
    return new Wild(`${this.path}["${key}"]`, dict[key]);
  }

  /** The field `key`, or undefined when absent (Python's `payload.get(key)`). */
  opt(key: string): Wild | undefined {
    const dict = this.#dict();
    return Object.hasOwn(dict, key) ? new Wild(`${this.path}["${key}"]`, dict[key]) : undefined;
  }

  has(key: string): boolean {
    return isObject(this.value) && Object.hasOwn(this.value, key);
  }

  /** Python's truthiness: null, false, 0, "", [] and {} are false. */
  get truthy(): boolean {
    const v = this.value;
    if (Array.isArray(v)) return v.length > 0;
    if (isObject(v)) return Object.keys(v).length > 0;
    return Boolean(v);
  }

  str(): string {
    if (typeof this.value !== "string") throw new BadRequestError(`${this.path} is not a string`);
    return this.value;
  }

  strOrNull(): string | null {
    return this.value === null ? null : this.str();
  }

  int(): number {
    if (typeof this.value !== "number" || !Number.isInteger(this.value))
      throw new BadRequestError(`${this.path} is not an integer`);
    return this.value;
  }

  bool(): boolean {
    if (typeof this.value !== "boolean") throw new BadRequestError(`${this.path} is not a boolean`);
    return this.value;
  }

  list(): Wild[] {
    if (!Array.isArray(this.value)) throw new BadRequestError(`${this.path} is not a list`);
    return this.value.map((item: unknown, i) => new Wild(`${this.path}[${i}]`, item));
  }

  /** The keys of an object (in payload order). */
  keys(): string[] {
    return Object.keys(this.#dict());
  }
}
