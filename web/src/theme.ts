/**
 * The colour theme from the reader's color_scheme setting (Zulip's numbers: 1 automatic,
 * 2 dark, 3 light). Automatic follows the system's prefers-color-scheme, also when it
 * changes while the page is open. The page's colours are CSS custom properties
 * (style.css) that `html[data-theme=dark]` redefines, so the switch is one attribute.
 */

const AUTOMATIC = 1;
const DARK = 2;
const LIGHT = 3;

let scheme = AUTOMATIC;
const systemDark = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;

function apply(): void {
  const dark = scheme === DARK || (scheme === AUTOMATIC && systemDark?.matches === true);
  document.documentElement.dataset["theme"] = dark ? "dark" : "light";
}

systemDark?.addEventListener("change", apply);

/** Follows the setting's value; anything but dark or light is automatic, as before login. */
export function setColorScheme(value: unknown): void {
  scheme = value === DARK || value === LIGHT ? value : AUTOMATIC;
  apply();
}
apply();
