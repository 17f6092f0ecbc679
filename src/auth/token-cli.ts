// Makes a bearer token and the entry to put in the tokens file. The secret is
// printed once, to the operator; the server only ever sees its hash.
//   npm run token -- --apps support,billing [--user u_42] [--read-only] [--name backend]
//   npm run token -- --scope metrics --name prometheus   (may scrape /metrics, grants no app)
import { hashToken, newToken } from "./tokens.js";

function main(argv: string[]): void {
  const get = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const apps = get("--apps");
  const scope = get("--scope");
  if ((!apps && !scope) || (scope !== undefined && scope !== "metrics")) {
    process.stderr.write(
      "usage: npm run token -- --apps APP[,APP...] | --apps '*' [--user USER] [--read-only] [--scope metrics] [--name NAME]\n",
    );
    process.exit(2);
  }
  const token = newToken();
  const user = get("--user");
  const entry = {
    name: get("--name") ?? `token-${new Date().toISOString().slice(0, 10)}`,
    sha256: hashToken(token),
    ...(apps
      ? {
          apps:
            apps === "*"
              ? "*"
              : apps
                  .split(",")
                  .map((a) => a.trim())
                  .filter(Boolean),
        }
      : {}),
    ...(user ? { user } : {}),
    ...(argv.includes("--read-only") ? { readOnly: true } : {}),
    ...(scope ? { scopes: [scope] } : {}),
  };
  process.stdout.write(
    `token (give to the client, store nowhere else):\n  ${token}\n\nentry for SESSIONSTORE_TOKENS_FILE's "tokens" list:\n  ${JSON.stringify(entry)}\n`,
  );
}

main(process.argv.slice(2));
