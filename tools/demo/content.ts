/**
 * @module tools/demo/content
 * The cast, channels and message templates of the demo realm. Plain data, no
 * randomness: the demo must look the same on every machine so that documentation,
 * screenshots and bug reports can refer to it. Names follow Zulip's development
 * server (Shakespeare's characters) so Zulip developers feel at home.
 */
import { ROLE, type Role } from "../../src/engine/index.js";

export interface DemoPerson {
  /** Short handle used in this file to refer to the person. */
  readonly key: string;
  readonly fullName: string;
  readonly email: string;
  readonly role: Role;
  /** Bots are owned by the demo owner. */
  readonly bot?: boolean;
}

/** The first person is the realm's owner; start prints their login. */
export const PEOPLE: readonly DemoPerson[] = [
  { key: "desdemona", fullName: "Desdemona", email: "desdemona@example.com", role: ROLE.OWNER },
  { key: "iago", fullName: "Iago", email: "iago@example.com", role: ROLE.ADMINISTRATOR },
  { key: "prospero", fullName: "Prospero", email: "prospero@example.com", role: ROLE.MODERATOR },
  { key: "hamlet", fullName: "King Hamlet", email: "hamlet@example.com", role: ROLE.MEMBER },
  { key: "othello", fullName: "Othello, the Moor of Venice", email: "othello@example.com", role: ROLE.MEMBER },
  { key: "cordelia", fullName: "Cordelia, Lear's daughter", email: "cordelia@example.com", role: ROLE.MEMBER },
  { key: "polonius", fullName: "Polonius", email: "polonius@example.com", role: ROLE.GUEST },
  { key: "bot", fullName: "Deploy Bot", email: "deploy-bot@example.com", role: ROLE.MEMBER, bot: true },
];

export type ChannelKind = "public" | "private-shared" | "private-protected";

export interface DemoChannel {
  readonly name: string;
  readonly description: string;
  readonly kind: ChannelKind;
  readonly members: readonly string[];
  /** Joins after half of the messages, to show what protected history hides. */
  readonly lateMembers?: readonly string[];
  readonly topics: readonly string[];
  /** Relative share of channel traffic. */
  readonly weight: number;
}

export const CHANNELS: readonly DemoChannel[] = [
  {
    name: "general",
    description: "Everyone is here, guests included",
    kind: "public",
    members: ["desdemona", "iago", "prospero", "hamlet", "othello", "cordelia", "polonius"],
    topics: ["welcome", "office hours", "announcements"],
    weight: 5,
  },
  {
    name: "engineering",
    description: "Building and shipping parley",
    kind: "public",
    members: ["desdemona", "iago", "prospero", "hamlet", "othello", "bot"],
    topics: ["release 1.0", "flaky tests", "code review", "deploys"],
    weight: 6,
  },
  {
    name: "design",
    description: "Logos, colors and pixels",
    kind: "public",
    members: ["desdemona", "hamlet", "cordelia"],
    topics: ["new logo", "color palette"],
    weight: 3,
  },
  {
    name: "random",
    description: "Lunch, weekends and everything else",
    kind: "public",
    members: ["desdemona", "iago", "prospero", "hamlet", "othello", "cordelia"],
    topics: ["lunch", "weekend plans", "book club"],
    weight: 3,
  },
  {
    name: "leadership",
    description: "Private; new members see the whole history",
    kind: "private-shared",
    members: ["desdemona", "iago", "prospero"],
    topics: ["quarterly goals", "hiring"],
    weight: 2,
  },
  {
    name: "hr",
    description: "Private; new members see only what is sent after they join",
    kind: "private-protected",
    members: ["desdemona", "iago"],
    lateMembers: ["cordelia"],
    topics: ["benefits", "onboarding"],
    weight: 1,
  },
];

/** Direct-message conversations by person key: one-on-ones and one group. */
export const DIRECT_CONVERSATIONS: readonly (readonly string[])[] = [
  ["hamlet", "othello"],
  ["desdemona", "iago"],
  ["desdemona", "polonius"],
  ["desdemona", "iago", "prospero"],
];

/**
 * Message templates. `{other}` is another participant's full name (for mentions),
 * `{topic}` the topic, `{channel}` the channel, `{n}` a running number. They cover
 * the Markdown clients render specially: mentions, links, code, emoji, quotes, lists.
 */
export const TEMPLATES: readonly string[] = [
  "Good morning everyone :wave:",
  "@**{other}** could you take a look at this when you have a minute?",
  "Here is the API reference we talked about: https://zulip.com/api/get-messages",
  "Sounds good to me :+1:",
  'Quick example of fetching the latest messages:\n\n```ts\nconst page = await client.messages.retrieve({ anchor: "newest", num_before: {n}, num_after: 0 });\nconsole.log(page.messages.length);\n```',
  "**Heads up:** the build on `main` is red again :fire:",
  "I wrote up the notes for *{topic}* in [the wiki](https://example.com/wiki/notes-{n}).",
  "> What do we do about {topic}?\n\nI'd start small and iterate.",
  "Agenda for {topic}:\n- status update\n- open questions\n- next steps",
  "Ship it! :tada: :rocket:",
  "Does anyone know why `npm test` takes {n} seconds on CI?",
  '```python\ndef greet(name):\n    return f"hello, {name}"\n```\nThat is all it takes.',
  "Thanks @**{other}**, that fixed it :smile:",
  "Let's continue this in #**{channel}>{topic}** tomorrow.",
  "Coffee break :coffee: back in {n} minutes",
  "I disagree a little: we should measure first, then decide.",
];

/** Templates for direct messages: shorter and more personal. */
export const DIRECT_TEMPLATES: readonly string[] = [
  "Hey, do you have a minute to talk about {n} things?",
  "Sure, ping me after lunch :coffee:",
  "Thanks for the review! :heart:",
  "Can you send me the link again? I lost it.",
  "Here it is: https://example.com/docs/{n}",
  "Let's keep this between us for now :wink:",
];

/** Messages sent by the bot: it speaks in deploy notifications. */
export const BOT_TEMPLATES: readonly string[] = [
  "Deployed build #{n} to staging :rocket:",
  "Deploy of build #{n} to production **succeeded** in {n}s",
  "Deploy of build #{n} **failed**: `healthcheck timeout` :warning:",
];
