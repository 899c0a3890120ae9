/**
 * Modal dialogs on the native <dialog> element: it traps focus, closes on Escape and
 * hands focus back to what opened it. The action runs while the dialog stays open, so
 * a refusal is shown where the user is looking; the dialog closes when it succeeds.
 */
import { h } from "./dom.js";

export interface DialogSpec {
  readonly title: string;
  /** Fields and text between the title and the buttons. */
  readonly body: readonly Node[];
  readonly submitLabel: string;
  readonly danger?: boolean;
  /** Runs the action: an error message to show, or null when done. */
  readonly onSubmit: () => Promise<string | null>;
}

let counter = 0;

/** Opens a modal dialog; resolves true when its action succeeded, false when cancelled. */
export function openDialog(spec: DialogSpec): Promise<boolean> {
  const id = `dialog-${++counter}`;
  const error = h("p", { class: "error-line", role: "alert" });
  const submit = h("button", { type: "submit", class: spec.danger === true ? "danger" : "primary" }, spec.submitLabel);
  const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
  const form = h(
    "form",
    { class: "dialog-form" },
    h("h2", { id: `${id}-title` }, spec.title),
    ...spec.body,
    error,
    h("div", { class: "dialog-buttons" }, cancel, submit),
  );
  const dialog = h("dialog", { class: "dialog", "aria-labelledby": `${id}-title` }, form);
  document.body.append(dialog);
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok: boolean): void => {
      if (done) return;
      done = true;
      resolve(ok);
      if (dialog.open) dialog.close();
      dialog.remove();
    };
    // Escape, or the dialog closed any other way.
    dialog.addEventListener("close", () => finish(false));
    cancel.addEventListener("click", () => finish(false));
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      if (submit.disabled) return;
      submit.disabled = true;
      error.textContent = "";
      const failed = (text: string): void => {
        error.textContent = text;
        submit.disabled = false;
      };
      spec.onSubmit().then(
        (failure) => (failure === null ? finish(true) : failed(failure)),
        (e: unknown) => failed(e instanceof Error ? e.message : "Something went wrong"),
      );
    });
    dialog.showModal();
  });
}

/** A labelled form field (label and control stacked). */
export function field(label: string, control: HTMLElement): HTMLElement {
  return h("label", { class: "dialog-field" }, h("span", {}, label), control);
}
