// A safe reader of Python pickles (protocols 2 to 5), for the pickled
// `EventActions` column of ADK's v0 schema. It builds plain data and never
// runs anything: a class reference (GLOBAL, STACK_GLOBAL) becomes a
// `PyGlobal`, and calling one (REDUCE, NEWOBJ) or setting its state (BUILD)
// becomes a `PyObject` that records the call. Only the few callables whose
// result is data (set, frozenset, bytes via codecs, OrderedDict, datetime) are
// interpreted, by name, without touching anything outside this file.

export class PyGlobal {
  constructor(
    readonly module: string,
    readonly name: string,
  ) {}
  get qualified(): string {
    return `${this.module}.${this.name}`;
  }
}

/** An instance: `cls(*args)` (REDUCE, NEWOBJ) with `state` from BUILD. */
export class PyObject {
  state: PyValue | undefined;
  constructor(
    readonly cls: PyGlobal,
    readonly args: PyValue[],
  ) {}
}

export class PyTuple {
  constructor(readonly items: PyValue[]) {}
}

export class PySet {
  constructor(readonly items: PyValue[]) {}
}

export type PyDict = Map<PyValue, PyValue>;

export type PyValue = null | boolean | number | bigint | string | Uint8Array | PyValue[] | PyDict | PyTuple | PySet | PyGlobal | PyObject;

export class PickleError extends Error {
  override name = "PickleError";
}

const MARK = Symbol("mark");
type Slot = PyValue | typeof MARK;

const textDecoder = new TextDecoder("utf-8", { fatal: true });
const latin1 = new TextDecoder("latin1");

/** Reads one pickle; throws PickleError on anything it does not understand. */
export function unpickle(data: Uint8Array): PyValue {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const stack: Slot[] = [];
  const memo = new Map<number, PyValue>();
  let pos = 0;

  const need = (n: number): number => {
    if (pos + n > data.length) throw new PickleError(`pickle truncated at byte ${pos}`);
    const at = pos;
    pos += n;
    return at;
  };
  const u8 = () => data[need(1)] as number;
  const u16 = () => view.getUint16(need(2), true);
  const u32 = () => view.getUint32(need(4), true);
  const u64 = () => {
    const n = view.getBigUint64(need(8), true);
    if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw new PickleError("pickle length too large");
    return Number(n);
  };
  const bytes = (n: number) => data.slice(need(n), pos);
  const utf8 = (n: number) => {
    try {
      return textDecoder.decode(data.subarray(need(n), pos));
    } catch {
      throw new PickleError(`invalid UTF-8 in pickle string at byte ${pos - n}`);
    }
  };
  const line = () => {
    const end = data.indexOf(0x0a, pos);
    if (end < 0) throw new PickleError("pickle truncated in a text line");
    const text = latin1.decode(data.subarray(pos, end));
    pos = end + 1;
    return text;
  };
  const pop = (): PyValue => {
    const v = stack.pop();
    if (v === undefined || v === MARK) throw new PickleError(`pickle stack underflow at byte ${pos - 1}`);
    return v;
  };
  const top = (): PyValue => {
    const v = stack[stack.length - 1];
    if (v === undefined || v === MARK) throw new PickleError(`pickle stack underflow at byte ${pos - 1}`);
    return v;
  };
  const popMark = (): PyValue[] => {
    const at = stack.lastIndexOf(MARK);
    if (at < 0) throw new PickleError(`pickle has no MARK at byte ${pos - 1}`);
    const items = stack.splice(at) as PyValue[];
    items.shift();
    return items;
  };
  const memoGet = (i: number): PyValue => {
    if (!memo.has(i)) throw new PickleError(`pickle memo ${i} is missing`);
    return memo.get(i) as PyValue;
  };
  const asDict = (v: PyValue): PyDict => {
    if (!(v instanceof Map)) throw new PickleError("SETITEM on something that is not a dict");
    return v;
  };
  const asList = (v: PyValue): PyValue[] => {
    if (!Array.isArray(v)) throw new PickleError("APPEND on something that is not a list");
    return v;
  };

  for (;;) {
    const op = u8();
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) throw new PickleError("pickle protocol above 5");
        break;
      case 0x95: // FRAME
        u64();
        break;
      case 0x2e: // STOP
        return pop();
      case 0x28: // MARK
        stack.push(MARK);
        break;
      case 0x30: // POP
        stack.pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        stack.push(top());
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
        stack.push(true);
        break;
      case 0x89: // NEWFALSE
        stack.push(false);
        break;
      case 0x4a: // BININT
        stack.push(view.getInt32(need(4), true));
        break;
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        stack.push(u16());
        break;
      case 0x8a: // LONG1
        stack.push(longFrom(bytes(u8())));
        break;
      case 0x8b: // LONG4
        stack.push(longFrom(bytes(u32())));
        break;
      case 0x49: {
        // INT (text): "01"/"00" are True/False in protocol 0
        const text = line();
        stack.push(text === "01" ? true : text === "00" ? false : intFromText(text));
        break;
      }
      case 0x4c: // LONG (text)
        stack.push(intFromText(line().replace(/L$/, "")));
        break;
      case 0x47: // BINFLOAT
        stack.push(view.getFloat64(need(8), false));
        break;
      case 0x46: // FLOAT (text)
        stack.push(Number(line()));
        break;
      case 0x8c: // SHORT_BINUNICODE
        stack.push(utf8(u8()));
        break;
      case 0x58: // BINUNICODE
        stack.push(utf8(u32()));
        break;
      case 0x8d: // BINUNICODE8
        stack.push(utf8(u64()));
        break;
      case 0x55: // SHORT_BINSTRING (a Python 2 str)
        stack.push(latin1.decode(bytes(u8())));
        break;
      case 0x54: // BINSTRING
        stack.push(latin1.decode(bytes(u32())));
        break;
      case 0x43: // SHORT_BINBYTES
        stack.push(bytes(u8()));
        break;
      case 0x42: // BINBYTES
        stack.push(bytes(u32()));
        break;
      case 0x8e: // BINBYTES8
      case 0x96: // BYTEARRAY8
        stack.push(bytes(u64()));
        break;
      case 0x7d: // EMPTY_DICT
        stack.push(new Map());
        break;
      case 0x5d: // EMPTY_LIST
        stack.push([]);
        break;
      case 0x29: // EMPTY_TUPLE
        stack.push(new PyTuple([]));
        break;
      case 0x8f: // EMPTY_SET
        stack.push(new PySet([]));
        break;
      case 0x91: // FROZENSET
        stack.push(new PySet(popMark()));
        break;
      case 0x85: // TUPLE1
        stack.push(new PyTuple([pop()]));
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        stack.push(new PyTuple([pop(), b]));
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop();
        const b = pop();
        stack.push(new PyTuple([pop(), b, c]));
        break;
      }
      case 0x74: // TUPLE
        stack.push(new PyTuple(popMark()));
        break;
      case 0x6c: // LIST
        stack.push(popMark());
        break;
      case 0x64: {
        // DICT
        const items = popMark();
        const d: PyDict = new Map();
        for (let i = 0; i + 1 < items.length; i += 2) d.set(items[i] as PyValue, items[i + 1] as PyValue);
        stack.push(d);
        break;
      }
      case 0x61: {
        // APPEND
        const v = pop();
        asList(top()).push(v);
        break;
      }
      case 0x65: {
        // APPENDS
        const items = popMark();
        asList(top()).push(...items);
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        asDict(top()).set(k, v);
        break;
      }
      case 0x75: {
        // SETITEMS
        const items = popMark();
        const d = asDict(top());
        for (let i = 0; i + 1 < items.length; i += 2) d.set(items[i] as PyValue, items[i + 1] as PyValue);
        break;
      }
      case 0x90: {
        // ADDITEMS
        const items = popMark();
        const s = top();
        if (!(s instanceof PySet)) throw new PickleError("ADDITEMS on something that is not a set");
        s.items.push(...items);
        break;
      }
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top());
        break;
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x68: // BINGET
        stack.push(memoGet(u8()));
        break;
      case 0x6a: // LONG_BINGET
        stack.push(memoGet(u32()));
        break;
      case 0x63: {
        // GLOBAL
        const module = line();
        stack.push(new PyGlobal(module, line()));
        break;
      }
      case 0x93: {
        // STACK_GLOBAL
        const name = pop();
        const module = pop();
        if (typeof module !== "string" || typeof name !== "string") throw new PickleError("STACK_GLOBAL needs two strings");
        stack.push(new PyGlobal(module, name));
        break;
      }
      case 0x52: {
        // REDUCE
        const args = pop();
        const fn = pop();
        stack.push(call(fn, tupleItems(args)));
        break;
      }
      case 0x81: {
        // NEWOBJ
        const args = pop();
        const cls = pop();
        if (!(cls instanceof PyGlobal)) throw new PickleError("NEWOBJ needs a class");
        stack.push(new PyObject(cls, tupleItems(args)));
        break;
      }
      case 0x92: {
        // NEWOBJ_EX
        pop(); // keyword arguments: none of the types read here take any
        const args = pop();
        const cls = pop();
        if (!(cls instanceof PyGlobal)) throw new PickleError("NEWOBJ_EX needs a class");
        stack.push(new PyObject(cls, tupleItems(args)));
        break;
      }
      case 0x62: {
        // BUILD
        const state = pop();
        const obj = top();
        if (!(obj instanceof PyObject)) throw new PickleError("BUILD on something that is not an object");
        obj.state = state;
        break;
      }
      default:
        throw new PickleError(`unsupported pickle opcode 0x${op.toString(16).padStart(2, "0")} at byte ${pos - 1}`);
    }
  }
}

function tupleItems(v: PyValue): PyValue[] {
  if (!(v instanceof PyTuple)) throw new PickleError("call arguments must be a tuple");
  return v.items;
}

function intFromText(text: string): number | bigint {
  if (!/^-?\d+$/.test(text)) throw new PickleError(`bad integer in pickle: ${text}`);
  const n = BigInt(text);
  return narrow(n);
}

function narrow(n: bigint): number | bigint {
  return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}

/** Little-endian two's complement, as LONG1/LONG4 encode it. */
function longFrom(b: Uint8Array): number | bigint {
  if (b.length === 0) return 0;
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i] as number);
  if ((b[b.length - 1] as number) & 0x80) n -= 1n << BigInt(8 * b.length);
  return narrow(n);
}

/** REDUCE: data-only builtins are evaluated by name; anything else is recorded. */
function call(fn: PyValue, args: PyValue[]): PyValue {
  if (!(fn instanceof PyGlobal)) throw new PickleError("REDUCE needs a callable");
  switch (fn.qualified) {
    case "builtins.set":
    case "builtins.frozenset":
    case "__builtin__.set":
    case "__builtin__.frozenset":
      return new PySet(args.length === 0 ? [] : iterableItems(args[0] as PyValue));
    case "builtins.bytearray":
    case "builtins.bytes":
      if (args.length === 0) return new Uint8Array();
      return bytesFromLatin1(args[0] as PyValue, "latin-1");
    case "_codecs.encode":
      return bytesFromLatin1(args[0] as PyValue, args[1] as PyValue);
    case "collections.OrderedDict":
      return new Map();
    case "copyreg._reconstructor": {
      const cls = args[0];
      if (!(cls instanceof PyGlobal)) throw new PickleError("copyreg._reconstructor needs a class");
      const obj = new PyObject(cls, []);
      if (args[2] !== null && args[2] !== undefined) obj.state = args[2];
      return obj;
    }
    case "copyreg.__newobj__": {
      const [cls, ...rest] = args;
      if (!(cls instanceof PyGlobal)) throw new PickleError("copyreg.__newobj__ needs a class");
      return new PyObject(cls, rest);
    }
    default:
      return new PyObject(fn, args);
  }
}

function iterableItems(v: PyValue): PyValue[] {
  if (Array.isArray(v)) return v;
  if (v instanceof PyTuple || v instanceof PySet) return v.items;
  throw new PickleError("set() of something that is not a list");
}

function bytesFromLatin1(text: PyValue, encoding: PyValue): Uint8Array {
  if (typeof text !== "string" || (encoding !== "latin1" && encoding !== "latin-1")) {
    throw new PickleError("bytes from a pickle must be latin-1 text");
  }
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0xff) throw new PickleError("latin-1 text with a character above U+00FF");
    out[i] = c;
  }
  return out;
}
