import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

/**
 * Whether a value satisfies a JSON Schema (ajv, draft 2020-12, which also reads the draft-07
 * schemas clients send). A schema ajv cannot compile counts as satisfied: the simulator does not
 * model the API's own schema checks, so the brain's value is trusted there.
 */
export class JsonSchemaChecker {
  readonly #ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  readonly #compiled = new Map<string, ValidateFunction | null>();

  conforms(schema: unknown, value: unknown): boolean {
    const validate = this.#compile(schema);
    return validate === null || validate(value) === true;
  }

  #compile(schema: unknown): ValidateFunction | null {
    const key = JSON.stringify(schema);
    const known = this.#compiled.get(key);
    if (known !== undefined) return known;
    let validate: ValidateFunction | null = null;
    try {
      // `$schema` names a draft ajv may not have loaded; the keywords are read either way.
      const { $schema: _draft, ...rest } = (schema ?? {}) as Record<string, unknown>;
      validate = this.#ajv.compile(rest);
    } catch {
      validate = null;
    }
    // Clients send a handful of schemas; a bound keeps a hostile stream of them from piling up.
    if (this.#compiled.size >= 256) {
      this.#compiled.clear();
      this.#ajv.removeSchema();
    }
    this.#compiled.set(key, validate);
    return validate;
  }
}
