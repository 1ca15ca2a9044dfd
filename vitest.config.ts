import { defineConfig } from "vitest/config";

/**
 * Suites where the process, the clock or a real peer is the subject: chaos (kill -9, signals,
 * races), the conformance harnesses (the real Agent SDK and Claude Code) and Redis. They run as
 * a tier of their own after the rest, one file at a time, so their timing is not squeezed by
 * neighbours on a 2-core machine.
 */
const HEAVY = [
  "test/chaos/**/*.test.ts",
  "test/conformance/**/*.test.ts",
  "test/trust-corpus/races.test.ts",
  "test/cli-batch-queue*.test.ts",
  "test/queue-*.test.ts",
];

/**
 * The attack corpora: long (30–40 s a file) but the clock is not what they judge — their
 * deadlines are hang watchdogs of 30 s to 4 min around cases that end in under a second, and
 * their controls prove an old engine is *still* running after a few seconds, which load only
 * makes surer. They run two at a time in a tier between the others (one at a time they added
 * about 150 s to the serial tier); the corpus's races stay in the serial tier.
 */
const CORPORA = [
  "test/trust-corpus/**/*.test.ts",
  "test/permissions-corpus.test.ts",
  "test/pattern-bounds.test.ts",
];

// Tests import workspace packages through their "source" export condition (STYLE.md §10),
// so they run against src/*.ts without a build; worker-thread tests load the built dist/.
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // vitest runs node with `--conditions source`, so a dependency that publishes a "source"
    // condition (eventsource and eventsource-parser, under the AI SDK of the compatibility suite
    // and under @modelcontextprotocol/sdk) would load as .ts: vite transforms it, and the packages
    // that import it, instead of node.
    server: {
      deps: {
        inline: [
          /\/node_modules\/ai\//,
          /\/node_modules\/@ai-sdk\//,
          /\/node_modules\/@modelcontextprotocol\/sdk\//,
          /\/node_modules\/eventsource(-parser)?\//,
        ],
      },
    },
    projects: [
      {
        extends: true,
        test: {
          name: "main",
          include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**", ...HEAVY, ...CORPORA],
          // Most files wait on sockets, child processes and threads: two at a time on two cores
          // (vitest's default is one fewer than the cores).
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "corpus",
          include: CORPORA,
          exclude: ["**/node_modules/**", ...HEAVY],
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "heavy",
          include: HEAVY,
          exclude: ["**/node_modules/**"],
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
