import { h } from "./dom.js";

/**
 * A scrolling list that keeps only the rows in view (plus a margin) in the
 * DOM, so a session of 10,000 events opens as fast as one of ten. Rows may
 * differ in height (an unfolded tool call): each is measured once rendered
 * and the offsets after it move; until then a row counts as `estimate`.
 */
export class VirtualList<T> {
  readonly element: HTMLDivElement;
  readonly #spacer: HTMLDivElement;
  readonly #render: (item: T, index: number) => HTMLElement;
  readonly #estimate: number;
  #items: T[] = [];
  #heights: number[] = [];
  #offsets: number[] = [0];
  #dirtyFrom = 0;
  readonly #rows = new Map<number, HTMLElement>();
  #frame = 0;
  /** Keep the last row in view as rows are added (live follow). */
  stickToBottom = false;

  constructor(render: (item: T, index: number) => HTMLElement, options: { estimate: number; label: string }) {
    this.#render = render;
    this.#estimate = options.estimate;
    this.#spacer = h("div", { class: "vlist-spacer" });
    this.element = h(
      "div",
      { class: "vlist", role: "list", "aria-label": options.label, on: { scroll: () => this.#schedule() } },
      this.#spacer,
    );
    new ResizeObserver(() => this.#schedule()).observe(this.element);
  }

  get length(): number {
    return this.#items.length;
  }

  item(index: number): T | undefined {
    return this.#items[index];
  }

  set(items: T[]): void {
    this.#items = items;
    this.#heights = items.map(() => this.#estimate);
    this.#dirtyFrom = 0;
    for (const row of this.#rows.values()) row.remove();
    this.#rows.clear();
    this.#schedule();
  }

  push(...items: T[]): void {
    if (items.length === 0) return;
    const follow = this.stickToBottom;
    this.#dirtyFrom = Math.min(this.#dirtyFrom, this.#items.length);
    for (const item of items) {
      this.#items.push(item);
      this.#heights.push(this.#estimate);
    }
    this.#schedule(follow);
  }

  /** Renders row `index` again (it changed, e.g. folded or unfolded). */
  refresh(index: number): void {
    const row = this.#rows.get(index);
    if (row) {
      row.remove();
      this.#rows.delete(index);
    }
    this.#schedule();
  }

  /** Renders every visible row again. */
  refreshAll(): void {
    for (const row of this.#rows.values()) row.remove();
    this.#rows.clear();
    this.#schedule();
  }

  scrollTo(index: number): void {
    this.#layout();
    const top = this.#offsets[index] ?? 0;
    const height = this.#heights[index] ?? this.#estimate;
    const view = this.element;
    if (top < view.scrollTop || top + height > view.scrollTop + view.clientHeight) {
      view.scrollTop = Math.max(0, top - view.clientHeight / 3);
    }
    this.#schedule();
  }

  scrollToBottom(): void {
    this.#layout();
    this.element.scrollTop = this.element.scrollHeight;
    this.#schedule();
  }

  atBottom(): boolean {
    const v = this.element;
    return v.scrollTop + v.clientHeight >= v.scrollHeight - 4;
  }

  #schedule(toBottom = false): void {
    if (toBottom) this.stickToBottom = true;
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      this.#draw();
    });
  }

  #layout(): void {
    const n = this.#items.length;
    if (this.#offsets.length === n + 1 && this.#dirtyFrom >= n) return;
    const from = Math.min(this.#dirtyFrom, this.#offsets.length - 1);
    this.#offsets.length = n + 1;
    for (let i = from; i < n; i++) this.#offsets[i + 1] = (this.#offsets[i] ?? 0) + (this.#heights[i] ?? this.#estimate);
    this.#dirtyFrom = n;
    this.#spacer.style.height = `${this.#offsets[n] ?? 0}px`;
  }

  /** The first row whose bottom is below `y`. */
  #indexAt(y: number): number {
    let lo = 0;
    let hi = this.#items.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.#offsets[mid + 1] ?? 0) <= y) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(0, lo);
  }

  #draw(): void {
    for (let pass = 0; pass < 3; pass++) {
      this.#layout();
      if (this.stickToBottom) this.element.scrollTop = this.element.scrollHeight;
      const view = this.element;
      const margin = view.clientHeight;
      const first = this.#indexAt(Math.max(0, view.scrollTop - margin));
      const bottom = view.scrollTop + view.clientHeight + margin;
      const wanted = new Set<number>();
      for (let i = first; i < this.#items.length && (this.#offsets[i] ?? 0) < bottom; i++) wanted.add(i);
      for (const [i, row] of this.#rows) {
        if (!wanted.has(i)) {
          row.remove();
          this.#rows.delete(i);
        }
      }
      for (const i of wanted) {
        let row = this.#rows.get(i);
        if (!row) {
          row = this.#render(this.#items[i] as T, i);
          row.classList.add("vlist-row");
          row.setAttribute("role", "listitem");
          this.#rows.set(i, row);
          this.element.appendChild(row);
        }
        row.style.transform = `translateY(${this.#offsets[i] ?? 0}px)`;
      }
      // Measure what is on screen; rows above the view that change height
      // would shift what the reader looks at, so the scroll follows them.
      let changed = false;
      let shift = 0;
      for (const i of wanted) {
        const height = (this.#rows.get(i) as HTMLElement).offsetHeight;
        if (height > 0 && height !== this.#heights[i]) {
          if ((this.#offsets[i] ?? 0) < view.scrollTop) shift += height - (this.#heights[i] ?? 0);
          this.#heights[i] = height;
          this.#dirtyFrom = Math.min(this.#dirtyFrom, i);
          changed = true;
        }
      }
      if (!changed) return;
      if (shift && !this.stickToBottom) view.scrollTop += shift;
    }
  }
}
