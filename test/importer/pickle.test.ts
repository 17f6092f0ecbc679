// The safe unpickler on real pickles written by Python (fixtures/make-pickles.py):
// ADK's EventActions in every protocol ADK's v0 schema may hold, read back as
// the JSON form ADK's own model_dump gives; plain values; and refusals.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PickleError, PyObject, PySet, PyTuple, unpickle } from "../../src/importer/adk/pickle.js";
import { toJsonForm } from "../../src/importer/adk/pydantic-json.js";

const cases = JSON.parse(readFileSync(new URL("fixtures/pickles.json", import.meta.url), "utf8")) as Record<
  string,
  { pickle: string; json?: unknown }
>;
const bytesOf = (name: string) => new Uint8Array(Buffer.from((cases[name] as { pickle: string }).pickle, "base64"));

describe("unpickle", () => {
  for (const proto of [2, 3, 4, 5]) {
    it(`reads ADK's EventActions pickled with protocol ${proto} as ADK's JSON form`, () => {
      expect(toJsonForm(unpickle(bytesOf(`event_actions_p${proto}`)))).toEqual(cases[`event_actions_p${proto}`]?.json);
      expect(toJsonForm(unpickle(bytesOf(`empty_actions_p${proto}`)))).toEqual(cases[`empty_actions_p${proto}`]?.json);
    });

    it(`reads plain values pickled with protocol ${proto}`, () => {
      const value = unpickle(bytesOf(`plain_p${proto}`));
      expect(value).toBeInstanceOf(Map);
      const d = value as Map<unknown, unknown>;
      expect(d.get("big")).toBe(2n ** 70n);
      expect(d.get("neg")).toBe(-5);
      expect(d.get("i32")).toBe(70000);
      expect(d.get("f")).toBe(0.1);
      expect(d.get("b")).toEqual(new Uint8Array([0x78, 0x79, 0x7a]));
      expect(d.get("t")).toEqual(new PyTuple([1, "a"]));
      expect(d.get("set")).toEqual(new PySet(["q"]));
      expect(d.get("none")).toBeNull();
      expect(d.get("uni")).toBe("h\u00e9llo \u2713");
      expect(d.get("enum")).toBeInstanceOf(PyObject);
      expect((d.get("enum") as PyObject).cls.qualified).toBe("google.genai.types.FinishReason");
      expect(toJsonForm(d.get("enum") as PyObject)).toBe("STOP");
      expect(toJsonForm(d.get("when") as PyObject)).toBe("2026-12-01T05:06:07.891011");
    });
  }

  it("refuses what it cannot read, naming the byte", () => {
    // protocol 2, then PERSID-style BINPERSID (0x51): never supported
    expect(() => unpickle(new Uint8Array([0x80, 0x02, 0x4e, 0x51, 0x2e]))).toThrow(/unsupported pickle opcode 0x51 at byte 3/);
    expect(() => unpickle(new Uint8Array([0x80, 0x02, 0x58, 0xff, 0x00]))).toThrow(PickleError);
    expect(() => unpickle(new Uint8Array([0x80, 0x06, 0x4e, 0x2e]))).toThrow(/protocol above 5/);
    expect(() => unpickle(new Uint8Array([0x80, 0x02, 0x2e]))).toThrow(/underflow/);
  });

  it("never calls anything: a reduce of os.system is only recorded", () => {
    // pickle.dumps of a __reduce__ returning (os.system, ("echo hi",)), protocol 2
    const bytes = new Uint8Array(Buffer.from("800263706f7369780a73797374656d0a710058070000006563686f20686971018571025271032e", "hex"));
    const value = unpickle(bytes);
    expect(value).toBeInstanceOf(PyObject);
    expect((value as PyObject).cls.qualified).toBe("posix.system");
    expect((value as PyObject).args).toEqual(["echo hi"]);
    expect(() => toJsonForm(value)).toThrow(/cannot read an instance of posix.system/);
  });
});
