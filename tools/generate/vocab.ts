/**
 * @module tools/generate/vocab
 * Word lists for synthetic chat. Content words are plain English words that are stop
 * words neither in Zulip's list nor in PostgreSQL's `english` configuration, and no
 * two of them share a stem, so a search for one of them selects the same messages in
 * the engine (Porter) and in PostgreSQL (Snowball). Names never reuse content words.
 */

/** Ordered by intended frequency: the content sampler draws ranks from a Zipf law. */
export const WORDS: readonly string[] = (
  "build server deploy test release branch merge review ticket client database query cache latency " +
  "error crash bug patch config network socket thread memory disk storage backup metric alert " +
  "dashboard login session token password account invoice customer design mockup sprint roadmap " +
  "meeting agenda lunch coffee weekend holiday vacation office remote laptop monitor keyboard " +
  "docker kubernetes cluster node pod container image registry pipeline runner artifact schema " +
  "migration table column row replica shard partition vacuum planner optimizer compiler linker " +
  "parser lexer grammar syntax module package library framework plugin widget button modal " +
  "sidebar header footer layout color font icon avatar emoji sticker thumbnail upload download " +
  "browser mobile tablet desktop android iphone firmware driver kernel scheduler interrupt " +
  "timeout retry backoff quota limit throttle budget invoice payroll hiring interview onboarding " +
  "documentation tutorial example snippet gist wiki chart graph report summary draft proposal " +
  "feedback question answer idea plan goal milestone deadline estimate blocker risk incident " +
  "postmortem outage pager rotation escalation oncall handoff standup retro demo launch " +
  "feature flag toggle experiment cohort funnel signup churn revenue pricing discount coupon " +
  "translation locale timezone calendar reminder notification email digest newsletter " +
  "spreadsheet formula macro script terminal shell prompt cursor editor keymap theme font " +
  "garden bicycle guitar piano concert movie novel podcast recipe pizza noodle sandwich " +
  "mountain river forest beach island harbor bridge tunnel highway airport station"
).split(/\s+/);

/** A word that appears in a few percent of messages: the "common word" search. */
export const COMMON_WORD = "latency";
/** A word inserted into a handful of messages only: the "rare word" search. */
export const RARE_WORD = "quixotic";

export const FIRST_NAMES: readonly string[] = (
  "Ada Alan Grace Linus Barbara Dennis Ken Margaret Edsger Donald Frances John Radia Tim Vint " +
  "Katherine Dorothy Mary Hedy Claude Niklaus Bjarne Guido Yukihiro Brendan Anders Rich Larry " +
  "Sophie Adele Carol Joan Annie Evelyn Jean Betty Kathleen Marlyn Ruth Frances Shafi Leslie " +
  "Robin Whitfield Martin Ivan Butler Fernando Jeannette Shafira Priya Arjun Mei Hiro Kenji " +
  "Olga Pavel Dmitri Ingrid Lars Astrid Nils Elena Marco Giulia Luca Chiara Pedro Lucia Diego " +
  "Amara Kwame Zanele Thabo Fatima Omar Layla Yusuf Aisha Tariq Noor Samir Leila Hassan Rania " +
  "Chen Wei Ling Jun Hana Yuna Minho Jisoo Anh Linh Quang Thanh Rahul Ananya Vikram Kavya Rohan"
).split(/\s+/);

export const LAST_NAMES: readonly string[] = (
  "Lovelace Turing Hopper Torvalds Liskov Ritchie Thompson Hamilton Dijkstra Knuth Allen McCarthy " +
  "Perlman Berners Cerf Johnson Vaughan Jackson Lamarr Shannon Wirth Stroustrup Rossum Matsumoto " +
  "Eich Hejlsberg Hickey Wall Wilson Goldberg Kare Clarke Easley Estrin Bartik Spence Holberton " +
  "Antonelli Wescoff Teitelbaum Goldwasser Lamport Milner Hoare Sutherland Lampson Corbato Adleman " +
  "Rivest Diffie Hellman Merkle Kahn Metcalfe Boggs Postel Baran Davies Kleinrock Engelbart Kay " +
  "Ingalls Tesler Wozniak Jobs Gates Allen Moore Noyce Kilby Shockley Bardeen Brattain Amdahl " +
  "Backus Naur Iverson Kemeny Kurtz Hamming Golomb Reed Solomon Viterbi Huffman Ziv Lempel Welch"
).split(/\s+/);

export const TOPIC_NOUNS: readonly string[] = WORDS.slice(0, 120);
