import { z } from "zod";

/**
 * A zod schema built at its first use instead of when its module loads (R-V2). Building zod 4
 * schemas is costly (every instance gets its methods of its own): a module of them at top level
 * weighs on every import of a package, though most are read only by some runs (stream-json
 * validation, settings files that exist, a frontmatter) and never before a session's first
 * request. The value stands for the schema in every read (`parse`, `safeParse`, `shape`,
 * `instanceof`, use inside another schema).
 *
 * Registry metadata too, wherever it is put: the stand-in is not the built schema (zod's
 * registries key metadata by schema), so its internals name the built schema as their `parent` —
 * zod's own link from a `.describe()` copy to its original. A registry then gives the stand-in the
 * built schema's metadata (a `.describe()` inside `build`) with its own on top (`registry.add` of
 * the stand-in), and `z.toJSONSchema` builds the stand-in's schema on the built one's: the same
 * JSON Schema as the eager schema's (a schema with an `id` comes out as a `$ref` to its definition).
 * `description` and `meta()` read the stand-in's metadata.
 */
export function lazySchema<Schema extends object>(build: () => Schema): Schema {
  let built: Schema | undefined;
  let internals: object | undefined;
  const schema = (): Schema => {
    if (built === undefined) {
      const made = build();
      built = made;
      internals = new Proxy((made as { _zod: object })._zod, {
        get: (target, key) => (key === "parent" ? made : Reflect.get(target, key)),
      });
    }
    return built;
  };
  const standIn: Schema = new Proxy({} as Schema, {
    get: (_target, key) => {
      const target = schema();
      if (key === "_zod") return internals;
      if (key === "description") return z.globalRegistry.get(standIn as z.ZodType)?.description;
      if (key === "meta") {
        const meta = Reflect.get(target, key) as (...args: unknown[]) => unknown;
        return (...args: unknown[]) =>
          args.length === 0 ? z.globalRegistry.get(standIn as z.ZodType) : meta(...args);
      }
      return Reflect.get(target, key);
    },
    has: (_target, key) => Reflect.has(schema(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
  });
  return standIn;
}
