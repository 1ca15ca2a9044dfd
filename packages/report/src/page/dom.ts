/**
 * The page's only way to make elements. Text from transcripts is hostile (a tool result may hold
 * `</script>` or `<img onerror>`): it only ever becomes a Text node or an attribute value set
 * through the DOM, never markup — there is no innerHTML in this page.
 */
export type Child = Node | string | number | null | undefined | false;

export interface Props {
  readonly class?: string;
  readonly title?: string;
  readonly data?: Readonly<Record<string, string | number>>;
  readonly attrs?: Readonly<Record<string, string>>;
  readonly onClick?: (event: MouseEvent) => void;
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: readonly Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  if (props.class) element.className = props.class;
  if (props.title) element.title = props.title;
  for (const [key, value] of Object.entries(props.data ?? {})) element.dataset[key] = String(value);
  for (const [key, value] of Object.entries(props.attrs ?? {})) element.setAttribute(key, value);
  if (props.onClick) (element as HTMLElement).addEventListener("click", props.onClick);
  append(element, children);
  return element;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything in `parent`. */
export function replace(parent: Element, ...children: readonly Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A figure with its exact value kept beside the rounded text (tests and copy-paste read it). */
export function figure(label: string, text: string, value: number | string, key?: string): HTMLElement {
  return h(
    "div",
    { class: "figure", data: key ? { figure: key, value } : { value } },
    h("div", { class: "figure-value" }, text),
    h("div", { class: "figure-label" }, label),
  );
}

export function section(title: string, ...children: readonly Child[]): HTMLElement {
  return h("section", { class: "section" }, h("h2", {}, title), ...children);
}
