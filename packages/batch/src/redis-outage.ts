import type { Redis } from "ioredis";
import { describeRedisError, isRedisError } from "./redis-errors.js";

/**
 * Redis errors as the user should see them (R-B1): one line when an outage starts and
 * one when the connection is back, not one per retry of every BullMQ connection (ioredis retries
 * each of them every few hundred ms) and never a raw stack (BullMQ prints errors that no listener
 * takes). Give the returned function to every BullMQ object's "error" event.
 */
export function redisOutageReporter(
  connection: Redis,
  report: (message: string) => void,
): (error: Error) => void {
  let down = false;
  connection.on("ready", () => {
    if (!down) return;
    down = false;
    report("reconnected");
  });
  return (error) => {
    if (down) return;
    down = true;
    // R-R10: a refusal from Redis itself (OOM, READONLY, NOAUTH) names its fix.
    report(isRedisError(error) ? describeRedisError(error, urlOf(connection)) : error.message);
  };
}

function urlOf(connection: Redis): string {
  const { host, port, db } = connection.options;
  return `redis://${host}:${port}${db ? `/${db}` : ""}`;
}
