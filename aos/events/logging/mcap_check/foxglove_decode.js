// Decodes every message of an aos log as Foxglove does for channels whose
// message encoding is "flatbuffer": the channel's schema record is a binary
// flatbuffer schema (.bfbs) whose name is the root type, read with
// flatbuffers_reflection's Parser (the library Foxglove's MCAP support
// uses). Checks that
// - each schema is one Foxglove can describe: its type is an object of the
//   schema, and no field is a union, a fixed-size array, or a vector of
//   vectors, unions or arrays (Foxglove refuses those);
// - every field aos printed for a message (aos/json_to_flatbuffer.h, in
//   expected.json) decodes to the same value: integers at full width,
//   enums (aos prints their names), floats at their own precision, NaN
//   (aos prints null), strings, nested tables, structs and vectors.
"use strict";
const assert = require("assert/strict");
const { ByteBuffer } = require("flatbuffers");
const {
  BaseType,
  Parser,
  Schema,
  Table,
} = require("flatbuffers_reflection");

// A number kept as its text: int64s do not fit a JS number.
class NumberText {
  constructor(text) {
    this.text = text;
  }
}

// Strict JSON, as aos prints it, with numbers as NumberText.
function parseJsonKeepingNumbers(text) {
  let at = 0;
  const skipSpace = () => {
    while (at < text.length && " \t\r\n".includes(text[at])) ++at;
  };
  const expect = (c) => {
    skipSpace();
    if (text[at] !== c) throw new Error(`JSON: expected ${c} at ${at}`);
    ++at;
  };
  const value = () => {
    skipSpace();
    const c = text[at];
    if (c === "{") {
      ++at;
      const object = new Map();
      skipSpace();
      if (text[at] === "}") return ++at, object;
      for (;;) {
        const key = value();
        expect(":");
        object.set(key, value());
        skipSpace();
        if (text[at++] === "}") return object;
      }
    }
    if (c === "[") {
      ++at;
      const array = [];
      skipSpace();
      if (text[at] === "]") return ++at, array;
      for (;;) {
        array.push(value());
        skipSpace();
        if (text[at++] === "]") return array;
      }
    }
    if (c === '"') {
      const end = /"(?:[^"\\]|\\.)*"/y;
      end.lastIndex = at;
      const match = end.exec(text);
      at = end.lastIndex;
      return JSON.parse(match[0]);
    }
    const literal = /true|false|null|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    literal.lastIndex = at;
    const match = literal.exec(text);
    if (match === null) throw new Error(`JSON: unexpected ${c} at ${at}`);
    at = literal.lastIndex;
    if (match[0] === "true") return true;
    if (match[0] === "false") return false;
    if (match[0] === "null") return null;
    return new NumberText(match[0]);
  };
  return value();
}

const kIntegers = new Set([
  BaseType.UType, BaseType.Byte, BaseType.UByte, BaseType.Short,
  BaseType.UShort, BaseType.Int, BaseType.UInt, BaseType.Long,
  BaseType.ULong,
]);

// Throws naming the first thing Foxglove would refuse in `schema`.
function checkFoxgloveCanDescribe(name, schema) {
  assert.ok(schema.objects.some((o) => o.name === name),
    `schema ${name}: the type is not in its own .bfbs`);
  for (const object of schema.objects) {
    for (const field of object.fields) {
      const { baseType, element } = field.type;
      const where = `schema ${name}: ${object.name}.${field.name}`;
      assert.ok(baseType !== BaseType.Union && baseType !== BaseType.Array,
        `${where} is a union or array, which Foxglove cannot show`);
      if (baseType === BaseType.Vector) {
        assert.ok(![BaseType.Vector, BaseType.Union, BaseType.Array,
          BaseType.None].includes(element),
          `${where} is a vector Foxglove cannot show`);
      }
    }
  }
}

// Compares what aos printed (`ours`) with what Foxglove decoded, for a
// value of `baseType` (not a vector: compareObject walks those); `index`:
// its object or enum in `schema`, -1 for none.
function compareValue(ours, decoded, baseType, index, schema, path) {
  if (baseType === BaseType.Obj) {
    compareObject(ours, decoded, schema.objects[index], schema, path);
  } else if (baseType === BaseType.String) {
    assert.equal(decoded, ours, path);
  } else if (baseType === BaseType.Bool) {
    assert.equal(Boolean(decoded), ours, path);
  } else if (baseType === BaseType.Float || baseType === BaseType.Double) {
    if (ours === null) {
      assert.ok(!Number.isFinite(decoded), `${path}: aos printed null`);
    } else {
      const text = Number(ours.text);
      assert.equal(decoded,
        baseType === BaseType.Float ? Math.fround(text) : text, path);
    }
  } else if (kIntegers.has(baseType)) {
    let value;
    if (typeof ours === "string") {
      // An enum, printed by name.
      assert.ok(index >= 0, `${path}: a name for a plain integer`);
      const named = schema.enums[index].values.find((v) => v.name === ours);
      assert.ok(named, `${path}: no enum value ${ours}`);
      value = BigInt(named.value);
    } else {
      value = BigInt(ours.text);
    }
    assert.equal(BigInt(decoded), value, path);
  } else {
    assert.fail(`${path}: base type ${baseType} not expected`);
  }
}

function compareObject(ours, decoded, object, schema, path) {
  assert.ok(ours instanceof Map, `${path}: aos printed a table`);
  assert.equal(typeof decoded, "object", `${path}: decoded a table`);
  for (const [name, value] of ours) {
    const field = object.fields.find((f) => f.name === name);
    assert.ok(field, `${path}.${name}: not in ${object.name}`);
    assert.ok(name in decoded, `${path}.${name}: Foxglove did not decode it`);
    const { baseType, element, index } = field.type;
    if (baseType === BaseType.Vector) {
      assert.ok(Array.isArray(value) && Array.isArray(decoded[name]),
        `${path}.${name}: a vector`);
      assert.equal(decoded[name].length, value.length,
        `${path}.${name}: vector length`);
      for (let i = 0; i < value.length; ++i) {
        compareValue(value[i], decoded[name][i], element, index, schema,
          `${path}.${name}[${i}]`);
      }
    } else {
      compareValue(value, decoded[name], baseType, index, schema,
        `${path}.${name}`);
    }
  }
}

// `messages` (as @mcap/core read them, in log time order), against
// `expected` (expected.json). Returns how many messages were compared.
function checkDecodedLikeFoxglove(file, schemasById, channelsById, messages,
  expected) {
  const decoders = new Map();
  for (const [id, record] of schemasById) {
    const raw = Schema.getRootAsSchema(new ByteBuffer(record.data));
    const schema = raw.unpack();
    checkFoxgloveCanDescribe(record.name, schema);
    const index = schema.objects.findIndex((o) => o.name === record.name);
    decoders.set(id, { parser: new Parser(raw), schema, index });
  }
  const seen = new Map();
  for (const message of messages) {
    const channel = channelsById.get(message.channelId);
    const { parser, schema, index } = decoders.get(channel.schemaId);
    const type = schemasById.get(channel.schemaId).name;
    const key = `${channel.topic} ${type}`;
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    const bytes = new ByteBuffer(message.data);
    const root = bytes.readInt32(bytes.position()) + bytes.position();
    const decoded = parser.toObject(new Table(bytes, index, root));
    // Remote records have no JSON from aos (check_mcap.js decodes them by
    // hand); that Foxglove decodes them is checked above.
    const e = expected.find((x) => `${x.topic} ${x.type}` === key);
    assert.ok(e, `${file}: ${key} is not expected`);
    if (e.json === undefined) continue;
    compareObject(parseJsonKeepingNumbers(e.json[n]), decoded,
      schema.objects[index], schema, `${file}: ${key} #${n}`);
  }
  return messages.length;
}

module.exports = { checkDecodedLikeFoxglove };
