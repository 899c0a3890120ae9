/**
 * The compose box's draft, kept on the server (POST /drafts, PATCH /drafts/{id},
 * DELETE /drafts/{id}) as Zulip's web app syncs drafts, so that a half-written message
 * survives a reload and shows in the Drafts view of every device. Saved a moment after
 * typing stops, removed once sent or emptied. When the user turned synchronization off
 * (enable_drafts_synchronization; the server refuses), nothing more is sent.
 *
 * Which draft this tab is editing is remembered in sessionStorage (the ID only, no
 * text, no credentials), so a reload of the same tab puts it back into compose.
 */
import { ApiError, type Api } from "./api.js";

/** A draft as the API takes and gives it. */
export interface WireDraft {
  readonly type: "stream" | "private" | "";
  readonly to: readonly number[];
  readonly topic: string;
  readonly content: string;
  /** UNIX seconds. */
  readonly timestamp: number;
}

const SAVE_DELAY_MS = 800;
const TAB_KEY = "parley.compose-draft";

function tabDraftId(): number | null {
  try {
    const id = Number(sessionStorage.getItem(TAB_KEY));
    return Number.isInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

function rememberTabDraft(id: number | null): void {
  try {
    if (id === null) sessionStorage.removeItem(TAB_KEY);
    else sessionStorage.setItem(TAB_KEY, String(id));
  } catch {
    // Storage refused (private mode quotas): the draft is still on the server.
  }
}

function parseDraft(raw: unknown): (WireDraft & { readonly id: number }) | null {
  if (typeof raw !== "object" || raw === null) return null;
  const d = raw as Record<string, unknown>;
  const type = d["type"];
  if (typeof d["id"] !== "number" || typeof d["content"] !== "string") return null;
  if (type !== "stream" && type !== "private" && type !== "") return null;
  const to = Array.isArray(d["to"]) ? d["to"].filter((x): x is number => typeof x === "number") : [];
  const topic = typeof d["topic"] === "string" ? d["topic"] : "";
  const timestamp = typeof d["timestamp"] === "number" ? d["timestamp"] : 0;
  return { id: d["id"], type, to, topic, content: d["content"], timestamp };
}

export class DraftSync {
  #id: number | null = tabDraftId();
  #timer: number | null = null;
  #pending: WireDraft | null = null;
  /** One request at a time, in order: a PATCH must not overtake the POST that made the ID. */
  #queue: Promise<void> = Promise.resolve();
  #disabled = false;

  constructor(private readonly api: Api) {}

  /** The draft this tab was editing before a reload, if the server still has it. */
  async restore(): Promise<WireDraft | null> {
    if (this.#id === null || this.#disabled) return null;
    try {
      const reply = await this.api.get("/drafts");
      const drafts = Array.isArray(reply["drafts"]) ? reply["drafts"].map(parseDraft) : [];
      const mine = drafts.find((d) => d?.id === this.#id) ?? null;
      if (mine === null) this.#forget();
      return mine;
    } catch {
      return null;
    }
  }

  /** The compose box changed: saved after a pause (an empty box removes the draft). */
  changed(draft: WireDraft): void {
    if (this.#disabled) return;
    this.#pending = draft;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = window.setTimeout(() => this.flush(), SAVE_DELAY_MS);
  }

  /** Saves what is pending now (before the page goes, or the box is rebuilt). */
  flush(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const draft = this.#pending;
    this.#pending = null;
    if (draft === null) return;
    this.#enqueue(() => (draft.content.trim() === "" ? this.#remove() : this.#save(draft)));
  }

  /** The message was sent: its draft goes. */
  sent(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#pending = null;
    this.#enqueue(() => this.#remove());
  }

  /** Settles once every queued request has (tests and logout wait on it). */
  settled(): Promise<void> {
    return this.#queue;
  }

  #enqueue(step: () => Promise<void>): void {
    this.#queue = this.#queue.then(step).catch((error: unknown) => {
      // The user turned synchronization off: Zulip's web app then keeps drafts locally only.
      if (error instanceof ApiError && error.status === 400 && /disabled synchronizing drafts/.test(error.message))
        this.#disabled = true;
    });
  }

  async #save(draft: WireDraft): Promise<void> {
    if (this.#id !== null) {
      try {
        await this.api.patch(`/drafts/${this.#id}`, { draft: { ...draft } });
        return;
      } catch (error) {
        // Deleted elsewhere (the Drafts view, another device): make a new one.
        if (!(error instanceof ApiError && error.status === 404)) throw error;
        this.#forget();
      }
    }
    const reply = await this.api.post("/drafts", { drafts: [{ ...draft }] });
    const ids = reply["ids"];
    const id = Array.isArray(ids) && typeof ids[0] === "number" ? ids[0] : null;
    this.#id = id;
    rememberTabDraft(id);
  }

  async #remove(): Promise<void> {
    const id = this.#id;
    if (id === null) return;
    this.#forget();
    await this.api.delete(`/drafts/${id}`).catch((error: unknown) => {
      if (!(error instanceof ApiError && error.status === 404)) throw error;
    });
  }

  #forget(): void {
    this.#id = null;
    rememberTabDraft(null);
  }
}
