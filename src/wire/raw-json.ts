/**
 * @module wire/raw-json
 * A field's JSON already serialized (cached message or channel JSON): the envelope
 * writer splices the bytes in instead of encoding the value again.
 */
export class RawJson {
  constructor(readonly parts: readonly Buffer[]) {}
}
