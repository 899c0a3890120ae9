/**
 * Dates and times as the reader's twenty_four_hour_time setting asks (Zulip's: false
 * shows "1:05 PM", true "13:05"), in the browser's locale otherwise. The formatters
 * are made once per setting: toLocaleString with options builds a new formatter per
 * call (tenths of a millisecond each, times a few per message on every narrow switch).
 */

interface Formats {
  readonly day: Intl.DateTimeFormat;
  readonly dayWithYear: Intl.DateTimeFormat;
  readonly full: Intl.DateTimeFormat;
  readonly time: Intl.DateTimeFormat;
  readonly label: Intl.DateTimeFormat;
  readonly dateTime: Intl.DateTimeFormat;
}

function formats(hour12: boolean): Formats {
  return {
    day: new Intl.DateTimeFormat(undefined, { weekday: "short", month: "short", day: "numeric" }),
    dayWithYear: new Intl.DateTimeFormat(undefined, {
      weekday: "short",
      month: "short",
      day: "numeric",
      year: "numeric",
    }),
    full: new Intl.DateTimeFormat(undefined, { dateStyle: "full", timeStyle: "short", hour12 }),
    time: new Intl.DateTimeFormat(undefined, { hour: "numeric", minute: "2-digit", hour12 }),
    label: new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium", hour12 }),
    dateTime: new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short", hour12 }),
  };
}

// Zulip's default for new accounts is 12-hour time.
let current = formats(true);
let twentyFourHour = false;

/** Follows the setting; true when it changed (the caller redraws what shows times). */
export function setTwentyFourHourTime(value: unknown): boolean {
  const on = value === true;
  if (on === twentyFourHour) return false;
  twentyFourHour = on;
  current = formats(!on);
  return true;
}

/** The message list's time of day: "1:05 PM" or "13:05". */
export const timeOfDay = (when: Date): string => current.time.format(when);
/** A day's heading, with the year only when it is not this one. */
export const dayHeading = (when: Date): string =>
  (when.getFullYear() === new Date().getFullYear() ? current.day : current.dayWithYear).format(when);
/** The full date and time (a message time's tooltip). */
export const fullDateTime = (when: Date): string => current.full.format(when);
/** Short date with seconds, for a message's accessible name. */
export const shortDateTime = (when: Date): string => current.label.format(when);
/** Date and time in lists (recent conversations, drafts, scheduled messages). */
export const listDateTime = (when: Date): string => current.dateTime.format(when);
