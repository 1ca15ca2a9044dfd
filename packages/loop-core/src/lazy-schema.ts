/**
 * A zod schema built at its first use instead of when its module loads (R-V2). Building zod 4
 * schemas is costly (every instance gets its methods of its own): a module of them at top level
 * weighs on every import of a package, though most are read only by some runs (stream-json
 * validation, settings files that exist, a frontmatter) and never before a session's first
 * request. The value stands for the schema in every read (`parse`, `safeParse`, `shape`,
 * `instanceof`, use inside another schema). Not for a schema whose identity matters: a registry's
 * metadata (`.describe()` on the schema itself, `z.toJSONSchema` reading it) is keyed by the built
 * schema, not by this value.
 */
export function lazySchema<Schema extends object>(build: () => Schema): Schema {
  let built: Schema | undefined;
  const schema = () => {
    built ??= build();
    return built;
  };
  return new Proxy({} as Schema, {
    get: (_target, key) => Reflect.get(schema(), key),
    has: (_target, key) => Reflect.has(schema(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(schema()),
  });
}
