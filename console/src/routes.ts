// Deep links: one URL per app, session and event, in the hash so that the
// server serves one page and a link never reaches it.
//   #/                                          apps
//   #/apps/<app>?user=<u>                       sessions of an app (of one user)
//   #/apps/<app>/users/<u>/sessions/<s>         a session
//   #/apps/<app>/users/<u>/sessions/<s>/events/<seq>
//   #/apps/<app>/live?user=<u>&author=<a>       the app's live feed

export type Route =
  | { view: "home" }
  | { view: "app"; app: string; user?: string | undefined; find?: string | undefined }
  | { view: "session"; app: string; user: string; session: string; seq?: bigint | undefined }
  | { view: "live"; app: string; user?: string | undefined; author?: string | undefined };

const enc = encodeURIComponent;

export function href(route: Route): string {
  switch (route.view) {
    case "home":
      return "#/";
    case "app":
      return `#/apps/${enc(route.app)}${query({ user: route.user, find: route.find })}`;
    case "session": {
      const base = `#/apps/${enc(route.app)}/users/${enc(route.user)}/sessions/${enc(route.session)}`;
      return route.seq === undefined ? base : `${base}/events/${route.seq}`;
    }
    case "live":
      return `#/apps/${enc(route.app)}/live${query({ user: route.user, author: route.author })}`;
  }
}

export function parse(hash: string): Route {
  const [path = "", search = ""] = hash.replace(/^#/, "").split("?", 2);
  const params = new URLSearchParams(search);
  const opt = (name: string) => params.get(name) || undefined;
  const parts = path.split("/").filter((p) => p !== "");
  let segs: string[];
  try {
    segs = parts.map((p) => decodeURIComponent(p));
  } catch {
    return { view: "home" };
  }
  const [a, app, b, user, c, session, d, seq] = segs;
  if (a !== "apps" || app === undefined) return { view: "home" };
  if (b === undefined) return { view: "app", app, user: opt("user"), find: opt("find") };
  if (b === "live" && user === undefined) return { view: "live", app, user: opt("user"), author: opt("author") };
  if (b === "users" && user !== undefined && c === "sessions" && session !== undefined) {
    const n = d === "events" && seq !== undefined && /^\d{1,19}$/.test(seq) ? BigInt(seq) : undefined;
    return { view: "session", app, user, session, seq: n };
  }
  return { view: "app", app };
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}
