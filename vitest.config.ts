import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Every write must declare what it changed (engine/events/change-set.ts).
    env: { PARLEY_CHECK_CHANGES: "1" },
  },
});
