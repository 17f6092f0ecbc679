import { type ParseArgsConfig, parseArgs } from "node:util";

// One definition per option: the parser (node:util parseArgs), `--help` and
// the README's tables (scripts/options-table.ts) all read it, so they cannot
// drift apart.

/** Wrong invocation: unknown flag, missing or malformed value. Exit code 2. */
export class UsageError extends Error {}

export interface Option<T> {
  /** The long flag without dashes: `port` is `--port`. */
  flag: string;
  short?: string;
  /** Environment variable read when the flag is absent. */
  env?: string;
  /** A switch (`--read-only`) rather than a flag with a value. */
  isSwitch: boolean;
  /** Name of the value in help (`--port N`). */
  valueName: string;
  default: T;
  /** How the default reads in help and README; `unset` when none. */
  defaultText: string;
  /** Markdown allowed (links, backticks); help shows it as plain text. */
  description: string;
  /** Turns a raw value (flag or env) into T; `where` names its source in messages. */
  parse(raw: string, where: string): T;
}

export type OptionSet = Record<string, Option<unknown>>;
export type Values<S extends OptionSet> = { [K in keyof S]: S[K] extends Option<infer T> ? T : never };

interface Extra {
  short?: string;
  env?: string;
  valueName?: string;
}

export function text(flag: string, description: string, extra: Extra = {}): Option<string | undefined> {
  return {
    flag,
    isSwitch: false,
    valueName: extra.valueName ?? "TEXT",
    default: undefined,
    defaultText: "unset",
    description,
    parse: nonEmpty,
    ...pick(extra),
  };
}

export function textWithDefault(flag: string, fallback: string, description: string, extra: Extra = {}): Option<string> {
  return {
    flag,
    isSwitch: false,
    valueName: extra.valueName ?? "TEXT",
    default: fallback,
    defaultText: fallback,
    description,
    parse: nonEmpty,
    ...pick(extra),
  };
}

export function integer(flag: string, fallback: number, min: number, max: number, description: string, extra: Extra = {}): Option<number> {
  return {
    flag,
    isSwitch: false,
    valueName: extra.valueName ?? "N",
    default: fallback,
    defaultText: String(fallback),
    description,
    parse: (raw, where) => parseInteger(raw, where, min, max),
    ...pick(extra),
  };
}

export function optionalInteger(
  flag: string,
  min: number,
  max: number,
  description: string,
  extra: Extra = {},
): Option<number | undefined> {
  return {
    flag,
    isSwitch: false,
    valueName: extra.valueName ?? "N",
    default: undefined,
    defaultText: "unset",
    description,
    parse: (raw, where) => parseInteger(raw, where, min, max),
    ...pick(extra),
  };
}

export function choice<T extends string>(
  flag: string,
  choices: readonly T[],
  fallback: T,
  description: string,
  extra: Extra = {},
): Option<T> {
  return {
    flag,
    isSwitch: false,
    valueName: extra.valueName ?? choices.join("|"),
    default: fallback,
    defaultText: fallback,
    description,
    parse: (raw, where) => {
      if ((choices as readonly string[]).includes(raw)) return raw as T;
      throw new UsageError(`${where} must be one of ${choices.join(", ")}, got "${raw}"`);
    },
    ...pick(extra),
  };
}

/** A switch: present means on; its environment variable takes true/false, 1/0, yes/no. */
export function toggle(flag: string, description: string, extra: Extra = {}): Option<boolean> {
  return { flag, isSwitch: true, valueName: "", default: false, defaultText: "false", description, parse: parseBool, ...pick(extra) };
}

function pick(extra: Extra): { short?: string; env?: string } {
  const out: { short?: string; env?: string } = {};
  if (extra.short) out.short = extra.short;
  if (extra.env) out.env = extra.env;
  return out;
}

function nonEmpty(raw: string, where: string): string {
  if (raw.trim() === "") throw new UsageError(`${where} must not be empty`);
  return raw;
}

function parseInteger(raw: string, where: string, min: number, max: number): number {
  const n = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || n < min || n > max)
    throw new UsageError(`${where} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

function parseBool(raw: string, where: string): boolean {
  const v = raw.toLowerCase();
  if (["1", "true", "yes"].includes(v)) return true;
  if (["0", "false", "no"].includes(v)) return false;
  throw new UsageError(`${where} must be true or false, got "${raw}"`);
}

export interface Parsed<S extends OptionSet> {
  values: Values<S>;
  positionals: string[];
  help: boolean;
}

/**
 * Flags win over the environment, which wins over defaults. A value that
 * does not parse is a UsageError naming its flag or variable.
 */
export function parseOptions<S extends OptionSet>(
  options: S,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  settings: { positionals?: boolean; onValueError?: (err: UsageError) => UsageError } = {},
): Parsed<S> {
  const config: NonNullable<ParseArgsConfig["options"]> = { help: { type: "boolean", short: "h" } };
  for (const option of Object.values(options)) {
    config[option.flag] = { type: option.isSwitch ? "boolean" : "string", ...(option.short ? { short: option.short } : {}) };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: settings.positionals ?? false });
  } catch (err) {
    throw new UsageError(plainParseError(err));
  }
  const raw = parsed.values as Record<string, string | boolean | undefined>;
  const values: Record<string, unknown> = {};
  try {
    for (const [key, option] of Object.entries(options)) {
      const given = raw[option.flag];
      const fromEnv = option.env ? env[option.env] : undefined;
      if (given !== undefined) values[key] = typeof given === "boolean" ? given : option.parse(given, `--${option.flag}`);
      else if (fromEnv !== undefined && fromEnv !== "") values[key] = option.parse(fromEnv, option.env as string);
      else values[key] = option.default;
    }
  } catch (err) {
    if (err instanceof UsageError && settings.onValueError) throw settings.onValueError(err);
    throw err;
  }
  return { values: values as Values<S>, positionals: parsed.positionals, help: raw.help === true };
}

/** parseArgs's messages mention its own API ("To specify a positional argument ..."); keep the first sentence. */
function plainParseError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const unknown = /^Unknown option '([^']+)'/.exec(message);
  if (unknown) return `unknown option ${unknown[1]}`;
  const positional = /^Unexpected argument '([^']+)'/.exec(message);
  if (positional) return `unexpected argument ${positional[1]}`;
  const missing = /^Option '(?:-\w, )?(--[^ ]+) <value>' argument missing/.exec(message);
  if (missing) return `${missing[1]} needs a value`;
  return message.split(". ")[0] ?? message;
}

/** Markdown to the plain text a terminal shows: links keep their text, code loses its backticks. */
export function plain(markdown: string): string {
  return markdown.replace(/\[([^\]]+)\]\([^)]+\)/g, "$1").replace(/`/g, "");
}

function flagSpec(option: Option<unknown>): string {
  const short = option.short ? `-${option.short}, ` : "";
  return `${short}--${option.flag}${option.isSwitch ? "" : ` ${option.valueName}`}`;
}

/** `--help` text: usage line(s), what the command does, then one entry per option. */
export function renderHelp(usage: string, about: string, options: OptionSet): string {
  const entries = Object.values(options).map((o) => {
    const notes = [o.env ? `env ${o.env}` : "", o.defaultText !== "unset" && !o.isSwitch ? `default ${o.defaultText}` : ""].filter(Boolean);
    return { spec: flagSpec(o), text: `${plain(o.description)}${notes.length ? ` (${notes.join(", ")})` : ""}` };
  });
  entries.push({ spec: "-h, --help", text: "this help" });
  const width = Math.min(34, Math.max(...entries.map((e) => e.spec.length)) + 2);
  const lines = entries.map((e) =>
    e.spec.length + 2 > width
      ? `  ${e.spec}\n  ${" ".repeat(width)}${wrap(e.text, width + 2)}`
      : `  ${e.spec.padEnd(width)}${wrap(e.text, width + 2)}`,
  );
  return `${usage}\n\n${about}\n\noptions:\n${lines.join("\n")}\n`;
}

function wrap(text: string, indent: number, width = 100): string {
  const words = text.split(/\s+/);
  const lines: string[] = [];
  let line = "";
  for (const word of words) {
    if (line && indent + line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${" ".repeat(indent)}`);
}

/** The README's table of some options: variable, flag, default, meaning. */
export function markdownTable(options: OptionSet): string {
  const rows = Object.values(options).map((o) => {
    const variable = o.env ? `\`${o.env}\`` : "";
    const flag = `\`${flagSpec(o)}\``;
    const fallback = o.defaultText === "unset" ? "unset" : `\`${o.defaultText}\``;
    return `| ${variable} | ${flag} | ${fallback} | ${o.description} |`;
  });
  return ["| variable | flag | default | meaning |", "| --- | --- | --- | --- |", ...rows].join("\n");
}
