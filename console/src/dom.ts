// Every node of the console is built here. Strings only ever become text
// nodes or attribute values; nothing is parsed as HTML (no innerHTML anywhere,
// which test/console/source.test.ts checks), and links are the console's own
// hash routes only. Event content is untrusted: an event may carry
// `<script>` or a `javascript:` URL, and must show up as those characters.

export type Child = Node | string | number | bigint | null | undefined | false | Child[];

export interface Props {
  class?: string;
  id?: string;
  title?: string;
  role?: string;
  type?: string;
  name?: string;
  value?: string;
  placeholder?: string;
  /** Only the console's own routes ("#/…"). */
  href?: string;
  for?: string;
  min?: string;
  max?: string;
  step?: string;
  autocomplete?: string;
  disabled?: boolean;
  hidden?: boolean;
  checked?: boolean;
  open?: boolean;
  [data: `data-${string}`]: string;
  [aria: `aria-${string}`]: string;
  on?: Partial<{ [E in keyof HTMLElementEventMap]: (event: HTMLElementEventMap[E]) => void }>;
}

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === false) continue;
    if (key === "on") {
      for (const [event, handler] of Object.entries(value as Record<string, EventListener>)) el.addEventListener(event, handler);
    } else if (key === "href") {
      el.setAttribute("href", safeHref(String(value)));
    } else if (key === "value" && "value" in el) {
      (el as HTMLInputElement).value = String(value);
    } else if (key === "checked" && "checked" in el) {
      (el as HTMLInputElement).checked = Boolean(value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else if (child instanceof Node) parent.appendChild(child);
    else parent.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A link to a console route; anything else is refused, so no stored string can become a URL. */
export function safeHref(href: string): string {
  if (!href.startsWith("#/")) throw new Error(`not a console route: ${JSON.stringify(href)}`);
  return href;
}
