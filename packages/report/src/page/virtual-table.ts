import { h } from "./dom.js";

export interface Column<T> {
  readonly key: string;
  readonly title: string;
  /** What the column sorts by. */
  readonly value: (row: T) => number | string;
  /** What the cell shows (default: the value). */
  readonly text?: (row: T) => string;
  readonly numeric?: boolean;
  /** The cell is a link to this address (R-V1: each item's row links to its session page). */
  readonly href?: (row: T) => string;
  /** A CSS grid track, e.g. `6rem` or `minmax(8rem, 2fr)`. */
  readonly width: string;
}

export interface VirtualTableOptions<T> {
  readonly rowHeight?: number;
  readonly height?: number;
  /** Narrower than this, the table scrolls sideways (header and rows together) instead of cutting columns. */
  readonly minWidth?: string;
  readonly rowKey: (row: T) => string;
  readonly onRowClick?: (row: T) => void;
}

/**
 * A sortable table that builds only the rows in view (plus a few), so 10,000 rows cost what 30
 * do. Rows have one fixed height; the body is a spacer of `rows × height` with the visible rows
 * placed absolutely inside it.
 */
export class VirtualTable<T> {
  readonly element: HTMLElement;
  readonly #columns: readonly Column<T>[];
  readonly #options: VirtualTableOptions<T>;
  readonly #rowHeight: number;
  readonly #body: HTMLElement;
  readonly #spacer: HTMLElement;
  readonly #header: HTMLElement;
  #rows: readonly T[] = [];
  #sort: { key: string; descending: boolean } | null = null;
  #drawn = "";

  constructor(columns: readonly Column<T>[], options: VirtualTableOptions<T>) {
    this.#columns = columns;
    this.#options = options;
    this.#rowHeight = options.rowHeight ?? 30;
    const template = columns.map((column) => column.width).join(" ");
    this.#header = h(
      "div",
      { class: "vt-row vt-header", attrs: { role: "row" } },
      ...columns.map((column) =>
        h(
          "button",
          {
            class: `vt-cell${column.numeric ? " numeric" : ""}`,
            data: { column: column.key },
            attrs: { role: "columnheader", "aria-sort": "none" },
            onClick: () => this.sortBy(column.key),
          },
          column.title,
        ),
      ),
    );
    this.#header.style.gridTemplateColumns = template;
    this.#spacer = h("div", { class: "vt-spacer", attrs: { role: "rowgroup" } });
    this.#body = h("div", { class: "vt-body" }, this.#spacer);
    this.#body.style.height = `${options.height ?? 480}px`;
    this.#body.addEventListener("scroll", () => this.#draw(), { passive: true });
    if (options.minWidth !== undefined) {
      this.#header.style.minWidth = options.minWidth;
      this.#body.style.minWidth = options.minWidth;
    }
    this.element = h("div", { class: "vt", attrs: { role: "grid" } }, this.#header, this.#body);
    this.element.style.setProperty("--vt-columns", template);
  }

  /** The rows in their displayed order. */
  get rows(): readonly T[] {
    return this.#rows;
  }

  setRows(rows: readonly T[]): void {
    this.#rows = this.#sorted(rows);
    this.element.setAttribute("aria-rowcount", String(rows.length));
    this.#spacer.style.height = `${this.#rows.length * this.#rowHeight}px`;
    this.#drawn = "";
    this.#draw();
  }

  /** Sorts by a column; the same column again flips the order. Numbers start high, text at A. */
  sortBy(key: string): void {
    const column = this.#columns.find((candidate) => candidate.key === key);
    if (!column) return;
    this.#sort =
      this.#sort?.key === key
        ? { key, descending: !this.#sort.descending }
        : { key, descending: column.numeric === true };
    for (const cell of this.#header.children) {
      const element = cell as HTMLElement;
      element.setAttribute(
        "aria-sort",
        element.dataset.column === key ? (this.#sort.descending ? "descending" : "ascending") : "none",
      );
    }
    this.setRows(this.#rows);
  }

  #sorted(rows: readonly T[]): readonly T[] {
    const sort = this.#sort;
    const column = sort && this.#columns.find((candidate) => candidate.key === sort.key);
    if (!sort || !column) return rows;
    const direction = sort.descending ? -1 : 1;
    // Sort keys once, not per comparison: 10,000 rows sort in a few milliseconds.
    const keyed = rows.map((row, index) => ({ row, index, key: column.value(row) }));
    keyed.sort((a, b) => {
      const order =
        typeof a.key === "number" && typeof b.key === "number"
          ? a.key - b.key
          : String(a.key).localeCompare(String(b.key));
      return order === 0 ? a.index - b.index : order * direction;
    });
    return keyed.map((entry) => entry.row);
  }

  #draw(): void {
    const height = this.#body.clientHeight || 480;
    const first = Math.max(0, Math.floor(this.#body.scrollTop / this.#rowHeight) - 5);
    const last = Math.min(
      this.#rows.length,
      Math.ceil((this.#body.scrollTop + height) / this.#rowHeight) + 5,
    );
    const window = `${first}:${last}`;
    if (window === this.#drawn) return;
    this.#drawn = window;
    const rows: HTMLElement[] = [];
    for (let index = first; index < last; index++) rows.push(this.#rowElement(this.#rows[index]!, index));
    this.#spacer.replaceChildren(...rows);
  }

  #rowElement(row: T, index: number): HTMLElement {
    const element = h(
      "div",
      {
        class: "vt-row",
        data: { key: this.#options.rowKey(row), index },
        attrs: { role: "row", "aria-rowindex": String(index + 1) },
        ...(this.#options.onRowClick ? { onClick: () => this.#options.onRowClick?.(row) } : {}),
      },
      ...this.#columns.map((column) => {
        const text = column.text ? column.text(row) : String(column.value(row));
        return h(
          "div",
          {
            class: `vt-cell${column.numeric ? " numeric" : ""}`,
            data: { column: column.key },
            // The whole value on hover: a cut-off answer, an exact token count, the full label.
            title: String(column.value(row)),
            attrs: { role: "gridcell" },
          },
          column.href ? h("a", { attrs: { href: column.href(row) } }, text) : text,
        );
      }),
    );
    element.style.top = `${index * this.#rowHeight}px`;
    element.style.height = `${this.#rowHeight}px`;
    element.style.gridTemplateColumns = this.#header.style.gridTemplateColumns;
    return element;
  }
}
