import { z } from "zod";

/** `--sandbox auto|on|off` (R-S6); the SDK resolves it (packages/sdk/src/sandbox.ts). */
export const sandboxFlagSchema = z.enum(["auto", "on", "off"], { message: "must be auto, on or off" });
