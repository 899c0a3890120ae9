import { defineConfig } from "vitest/config";

/** `npm run test:cluster`: nodes of `parley serve --cluster` over Debian's nats-server (docs/cluster.md). */
export default defineConfig({
  test: {
    include: ["test/cluster/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 60_000,
    pool: "forks",
    env: { PARLEY_CHECK_CHANGES: "1", PARLEY_WRITE_WARM_UP_ROUNDS: "0" },
  },
});
