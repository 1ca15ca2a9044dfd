/**
 * The `type` filter of Grep, as file-name globs. A subset of ripgrep's `--type-list`, applied the
 * same way by both backends (ripgrep gets it via `--type-add`), so results do not depend on which
 * backend ran.
 */
const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  c: ["*.c", "*.h"],
  cpp: ["*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"],
  cs: ["*.cs"],
  css: ["*.css", "*.scss", "*.sass", "*.less"],
  go: ["*.go"],
  html: ["*.html", "*.htm"],
  java: ["*.java"],
  js: ["*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"],
  json: ["*.json", "*.jsonc"],
  kotlin: ["*.kt", "*.kts"],
  md: ["*.md", "*.markdown", "*.mdx"],
  php: ["*.php"],
  py: ["*.py", "*.pyi"],
  rb: ["*.rb"],
  rust: ["*.rs"],
  sh: ["*.sh", "*.bash", "*.zsh"],
  sql: ["*.sql"],
  swift: ["*.swift"],
  toml: ["*.toml"],
  ts: ["*.ts", "*.tsx", "*.mts", "*.cts"],
  txt: ["*.txt"],
  xml: ["*.xml"],
  yaml: ["*.yaml", "*.yml"],
};

export function typeGlobs(type: string): readonly string[] | { readonly error: string } {
  const globs = FILE_TYPES[type];
  if (globs !== undefined) return globs;
  return {
    error: `Unknown file type "${type}". Known types: ${Object.keys(FILE_TYPES).join(", ")}. Or use glob.`,
  };
}
