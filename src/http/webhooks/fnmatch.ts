/**
 * @module http/webhooks/fnmatch
 * Python's fnmatch.fnmatch on POSIX, which Zulip uses for the only_events and
 * exclude_events parameters: `*`, `?`, `[seq]` and `[!seq]`, case-sensitive, over the
 * whole name.
 */
function translate(pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") out += "[\\s\\S]*";
    else if (c === "?") out += "[\\s\\S]";
    else if (c === "[") {
      let j = i + 1;
      if (pattern[j] === "!") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j++;
      if (j >= pattern.length) out += "\\[";
      else {
        let set = pattern.slice(i + 1, j).replace(/\\/g, "\\\\");
        if (set.startsWith("!")) set = "^" + set.slice(1);
        else if (set.startsWith("^")) set = "\\" + set;
        out += `[${set}]`;
        i = j;
      }
    } else out += c.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
  }
  return out;
}

export function fnmatch(name: string, pattern: string): boolean {
  try {
    return new RegExp(`^(?:${translate(pattern)})$`, "u").test(name);
  } catch {
    // A set Python accepts but this engine does not ([z-a]): it matches nothing there either.
    return false;
  }
}
