import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Clusters of server processes over nats-server take minutes: `npm run test:cluster` (vitest.cluster.config.ts).
    exclude: [...configDefaults.exclude, "test/cluster/**"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Every write must declare what it changed (engine/events/change-set.ts).
    env: { PARLEY_CHECK_CHANGES: "1" },
  },
});
