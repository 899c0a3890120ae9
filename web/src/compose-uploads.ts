/**
 * Files into the compose box, as Zulip's web app takes them: the 📎 button, files
 * dropped on the box, or pasted into the text. Each is sent to POST /user_uploads (the
 * session cookie and the CSRF token, through XMLHttpRequest, the one browser API that
 * reports upload progress) and a placeholder in the text becomes Zulip's
 * `[name](/user_uploads/...)` link when it is done; progress and errors show in the
 * compose status line.
 */
import { csrfToken } from "./api.js";
import { h } from "./dom.js";

/** Markdown link text: brackets would end it early. */
function linkText(name: string): string {
  return name.replace(/[[\]\\]/g, "\\$&");
}

/** The server's error message in a failed upload's answer, else a generic one. */
function failure(xhr: XMLHttpRequest, name: string): string {
  try {
    const body: unknown = JSON.parse(xhr.responseText);
    const msg = typeof body === "object" && body !== null ? (body as Record<string, unknown>)["msg"] : undefined;
    if (typeof msg === "string" && msg !== "") return `${name}: ${msg}`;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  return xhr.status === 0 ? `${name}: the server could not be reached` : `${name}: upload failed (${xhr.status})`;
}

function upload(file: File, onProgress: (fraction: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/v1/user_uploads");
    xhr.setRequestHeader("X-CSRFToken", csrfToken());
    xhr.upload.addEventListener("progress", (ev) => {
      if (ev.lengthComputable && ev.total > 0) onProgress(ev.loaded / ev.total);
    });
    xhr.addEventListener("load", () => {
      let url: unknown;
      try {
        url = (JSON.parse(xhr.responseText) as Record<string, unknown>)["url"];
      } catch {
        url = undefined;
      }
      if (xhr.status === 200 && typeof url === "string") resolve(url);
      else reject(new Error(failure(xhr, file.name)));
    });
    xhr.addEventListener("error", () => reject(new Error(failure(xhr, file.name))));
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}

export class ComposeUploads {
  /** The 📎 button and its hidden file input, for the compose box to place. */
  readonly elements: readonly HTMLElement[];
  readonly #input: HTMLInputElement;
  #uploading = 0;

  constructor(
    private readonly text: HTMLTextAreaElement,
    private readonly status: HTMLElement,
    dropZone: HTMLElement,
    private readonly onError: (text: string) => void,
  ) {
    this.#input = h("input", { type: "file", id: "compose-file", multiple: true, hidden: true });
    const button = h(
      "button",
      {
        type: "button",
        class: "compose-emoji compose-upload",
        "aria-label": "Upload files",
        title: "Upload files",
        onclick: () => this.#input.click(),
      },
      // Zulip's paperclip image from the emoji sheet: the glyph is an empty box without an emoji font.
      h("span", { class: "emoji-sprite emoji-1f4ce", "aria-hidden": "true" }),
    );
    this.elements = [button, this.#input];
    this.#input.addEventListener("change", () => {
      this.add([...(this.#input.files ?? [])]);
      this.#input.value = "";
    });
    dropZone.addEventListener("dragover", (ev) => {
      if (ev.dataTransfer?.types.includes("Files")) ev.preventDefault();
    });
    dropZone.addEventListener("drop", (ev) => {
      const files = [...(ev.dataTransfer?.files ?? [])];
      if (files.length === 0) return;
      ev.preventDefault();
      this.add(files);
    });
    text.addEventListener("paste", (ev) => {
      const files = [...(ev.clipboardData?.files ?? [])];
      if (files.length === 0) return;
      ev.preventDefault();
      this.add(files);
    });
  }

  /** Whether an upload is still on its way (a send would lose its link). */
  get busy(): boolean {
    return this.#uploading > 0;
  }

  /** Uploads each file, a placeholder at the caret until its link replaces it. */
  add(files: readonly File[]): void {
    for (const file of files) void this.#one(file);
  }

  async #one(file: File): Promise<void> {
    const placeholder = `[Uploading ${linkText(file.name)}…]()`;
    const inserted = this.#insert(`${placeholder} `);
    this.#uploading++;
    const show = (fraction: number) =>
      (this.status.textContent = `Uploading ${file.name}: ${Math.round(fraction * 100)}%`);
    show(0);
    try {
      const url = await upload(file, show);
      this.#replace(placeholder, `[${linkText(file.name)}](${url})`);
      if (--this.#uploading === 0) this.status.textContent = "";
    } catch (error) {
      this.#replace(inserted, "");
      this.#uploading--;
      const message = error instanceof Error ? error.message : `${file.name}: upload failed`;
      this.status.textContent = message;
      this.onError(message);
    }
  }

  /** Inserts at the caret (after a space when needed); returns what was inserted. */
  #insert(snippet: string): string {
    const t = this.text;
    const at = t.selectionStart ?? t.value.length;
    const before = t.value.slice(0, at);
    const lead = before === "" || /\s$/.test(before) ? "" : " ";
    t.value = before + lead + snippet + t.value.slice(t.selectionEnd ?? at);
    const caret = at + lead.length + snippet.length;
    t.setSelectionRange(caret, caret);
    t.dispatchEvent(new Event("input", { bubbles: true }));
    return lead + snippet;
  }

  #replace(from: string, to: string): void {
    const t = this.text;
    if (!t.value.includes(from)) {
      // The placeholder was edited away: the link goes at the end rather than nowhere.
      if (to !== "") t.value = `${t.value}${/\s$|^$/.test(t.value) ? "" : " "}${to}`;
    } else t.value = t.value.replace(from, to);
    t.dispatchEvent(new Event("input", { bubbles: true }));
  }
}
