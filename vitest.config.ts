import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Clusters of server processes over nats-server take minutes: `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: [...configDefaults.exclude, "test/cluster/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's default is one worker per core minus one: on CI's 2 cores that ran the files one at a
    // time while most of them wait on servers, browsers and fsync (the whole run used ~1.2 cores).
    // Three forks keep both cores busy; the suite passed at 3 under load average 15.
    maxWorkers: 3,
    // Every write must declare what it changed (engine/events/change-set.ts). Servers skip the
    // write warm-up (engine/warm-up-writes.ts, ~1 s a start): test/engine/warm-up-writes covers it.
    env: { PARLEY_CHECK_CHANGES: "1", PARLEY_WRITE_WARM_UP_ROUNDS: "0" },
  },
});
