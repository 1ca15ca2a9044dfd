import { defineConfig } from "vitest/config";

// Tests import workspace packages through their "source" export condition (STYLE.md §10),
// so they run against src/*.ts without a build; worker-thread tests load the built dist/.
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts", "test/**/*.test.ts"],
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
  },
});
