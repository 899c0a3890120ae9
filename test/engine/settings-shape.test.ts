/**
 * mergedSettings (settings/defaults.ts): every user's settings object has one hidden
 * class with fast properties, whatever they changed. Built in dictionary mode, each had
 * a map of its own, and a loop reading one setting of a channel's 10,000 members (the
 * resolve notice's readers) was deoptimized by every new one. Asked of V8 itself
 * (natives syntax, enabled for functions compiled after the flag is set).
 */
import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import { mergedSettings, SETTING_DEFAULTS } from "../../src/engine/settings/defaults.js";

setFlagsFromString("--allow-natives-syntax");
const sameMap = new Function("a", "b", "return %HaveSameMap(a, b)") as (a: object, b: object) => boolean;
const fast = new Function("a", "return %HasFastProperties(a)") as (a: object) => boolean;

describe("mergedSettings", () => {
  it("gives every user's settings one hidden class with fast properties, frozen or not", () => {
    const plain = mergedSettings();
    const changed = mergedSettings({ resolved_topic_notice_auto_read_policy: "never" });
    const layered = mergedSettings({ enter_sends: true }, undefined, { twenty_four_hour_time: true });
    expect(fast(plain)).toBe(true);
    expect(sameMap(plain, changed)).toBe(true);
    expect(sameMap(changed, layered)).toBe(true);
    expect(sameMap(Object.freeze(mergedSettings()), Object.freeze(mergedSettings({ enter_sends: true })))).toBe(true);
  });

  it("overlays the layers in order on Zulip's defaults", () => {
    const merged = mergedSettings({ enter_sends: true, emojiset: "text" }, undefined, { emojiset: "google" });
    expect(merged).toEqual({ ...SETTING_DEFAULTS, enter_sends: true, emojiset: "google" });
    expect(Object.keys(mergedSettings())).toEqual(Object.keys(SETTING_DEFAULTS));
  });
});
