import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll } from "vitest";

/** A project directory, a home of its own and a simulator in this process, for one test file. */
export interface SimProject {
  readonly dir: string;
  readonly home: string;
  readonly sim: SimHandle;
  /** The run's environment: the simulator's endpoint, the home as HOME and FORKLOOP_HOME. */
  env(): Record<string, string>;
}

/**
 * Registers the file's beforeAll/afterAll: temp directories (`prepare` writes into them before
 * the simulator starts) removed at the end, the simulator stopped. Read the fields inside tests.
 */
export function useSimProject(
  name: string,
  prepare?: (dir: string, home: string) => Promise<void>,
): SimProject {
  let dir = "";
  let home = "";
  let sim: SimHandle | undefined;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), `forkloop-${name}-`));
    home = await mkdtemp(join(tmpdir(), `forkloop-${name}-home-`));
    await prepare?.(dir, home);
    sim = await startSimInProcess(dir);
  }, 60_000);
  afterAll(async () => {
    await sim?.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });
  const started = (): SimHandle => {
    if (sim === undefined) throw new Error("useSimProject: read the simulator inside a test");
    return sim;
  };
  return {
    get dir() {
      return dir;
    },
    get home() {
      return home;
    },
    get sim() {
      return started();
    },
    env: () => ({ ...started().env, FORKLOOP_HOME: home, HOME: home }),
  };
}
