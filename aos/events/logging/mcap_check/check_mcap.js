// Reads aos MCAP logs with the MCAP project's own TypeScript reader
// (@mcap/core, decompression from @mcap/support) and checks them against
// what aos says it logged (expected.json from mcap_check_log_writer).
//
//   node check_mcap.js expected.json a.mcap [b.mcap ...]
//
// For each file, through the summary (McapIndexedReader) and by streaming
// every record (McapStreamReader): the header, one flatbuffer schema per
// type holding a binary schema (.bfbs), one channel per aos channel with
// its type, the attached configuration, message counts (statistics too)
// and every message's log and publish time, in order. In a log with
// forwarded channels, the remote records' channel (aos_remote_message, no
// aos_type, schema aos.logging.RemoteMessage): each record, decoded here
// by hand from its flatbuffer, comes just before the message it names
// (same channel id, sequence and log time) and holds the remote fields
// aos says it logged. Every message is also decoded as Foxglove decodes
// flatbuffer channels (foxglove_decode.js). The origins records' channel
// (aos_path_origins, no aos_type, schema aos.logging.MessageOrigins): each
// record, decoded by hand, comes just before the message it names, and the
// origins of every message (a record's, or none without one) are those aos
// says it logged. Prints one line per file; exits 1 with the first
// difference.
"use strict";
const fs = require("fs");
const assert = require("assert/strict");
const { McapIndexedReader, McapStreamReader } = require("@mcap/core");
const { loadDecompressHandlers } = require("@mcap/support");
const { checkDecodedLikeFoxglove } = require("./foxglove_decode");

const REMOTE_TOPIC = "aos_remote_message";
const REMOTE_TYPE = "aos.logging.RemoteMessage";
const ORIGINS_TOPIC = "aos_path_origins";
const ORIGINS_TYPE = "aos.logging.MessageOrigins";
// The channels of records beside the messages: topic -> schema.
const RECORD_TYPES = new Map([
  [REMOTE_TOPIC, REMOTE_TYPE],
  [ORIGINS_TOPIC, ORIGINS_TYPE],
]);

// "topic type": the aos channel, or a records' channel.
function keyOf(channel) {
  return `${channel.topic} ${channel.metadata.get("aos_type") ??
    RECORD_TYPES.get(channel.topic)}`;
}

// The root table of a flatbuffer, read with the wire format: root table
// offset, vtable, little-endian fields. field(id) is a field's position;
// a missing one fails naming `type`.
function rootTable(bytes, type) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const table = view.getUint32(0, true);
  const vtable = table - view.getInt32(table, true);
  const vtableSize = view.getUint16(vtable, true);
  const field = (id) => {
    const entry = 4 + 2 * id;
    const offset = entry < vtableSize ? view.getUint16(vtable + entry, true) : 0;
    assert.ok(offset !== 0, `${type} field ${id} is missing`);
    return table + offset;
  };
  return { view, field };
}

// A RemoteMessage flatbuffer (remote_message.fbs).
function decodeRemoteMessage(bytes) {
  const { view, field } = rootTable(bytes, "RemoteMessage");
  const uuidAt = field(5) + view.getUint32(field(5), true);
  assert.equal(view.getUint32(uuidAt, true), 16, "source_boot_uuid size");
  const hex = Buffer.from(bytes.subarray(uuidAt + 4, uuidAt + 20))
    .toString("hex");
  return {
    channelId: view.getUint16(field(0), true),
    queueIndex: view.getUint32(field(1), true),
    monotonicRemoteTime: view.getBigInt64(field(2), true).toString(),
    realtimeRemoteTime: view.getBigInt64(field(3), true).toString(),
    remoteQueueIndex: view.getUint32(field(4), true).toString(),
    sourceBootUuid: [hex.slice(0, 8), hex.slice(8, 12), hex.slice(12, 16),
      hex.slice(16, 20), hex.slice(20)].join("-"),
  };
}

// A MessageOrigins flatbuffer (message_origins.fbs): its origins as
// expected.json writes them ("ID/HOPS/UNCERTAINTY_US/TIME", comma-separated,
// " dropped N" if N > 0).
function decodeMessageOrigins(bytes) {
  const { view, field } = rootTable(bytes, "MessageOrigins");
  const vector = field(2) + view.getUint32(field(2), true);
  const origins = [];
  for (let i = 0; i < view.getUint32(vector, true); ++i) {
    // struct Origin: id uint32, hops uint16, uncertainty_us uint16, time
    // int64; 16 bytes each.
    const at = vector + 4 + 16 * i;
    origins.push([view.getUint32(at, true), view.getUint16(at + 4, true),
      view.getUint16(at + 6, true), view.getBigInt64(at + 8, true)].join("/"));
  }
  const dropped = view.getUint32(field(3), true);
  return {
    channelId: view.getUint16(field(0), true),
    queueIndex: view.getUint32(field(1), true),
    text: origins.join(",") + (dropped > 0 ? ` dropped ${dropped}` : ""),
  };
}

// The message after messages[i] in file order that is not an origins
// record (a remote record's message has its origins record between them).
function nextMessage(channelsById, messages, i) {
  let next = i + 1;
  while (next < messages.length &&
    channelsById.get(messages[next].channelId).topic === ORIGINS_TOPIC) {
    ++next;
  }
  return messages[next];
}

function checkSchemasAndChannels(file, schemasById, channelsById, expected) {
  const topics = [...channelsById.values()].map(keyOf).sort();
  assert.deepEqual(
    topics,
    expected.map((e) => `${e.topic} ${e.type}`).sort(),
    `${file}: channels`
  );
  for (const channel of channelsById.values()) {
    assert.equal(channel.messageEncoding, "flatbuffer", `${file}: encoding`);
    const schema = schemasById.get(channel.schemaId);
    assert.ok(schema, `${file}: ${channel.topic} has no schema`);
    if (!channel.metadata.has("aos_type")) {
      assert.ok(RECORD_TYPES.has(channel.topic),
        `${file}: channel ${channel.topic} without aos_type`);
    }
    assert.equal(schema.name, keyOf(channel).slice(channel.topic.length + 1));
    assert.equal(schema.encoding, "flatbuffer");
    // A binary flatbuffer schema: file identifier "BFBS" at bytes 4..8.
    assert.equal(
      Buffer.from(schema.data.subarray(4, 8)).toString("latin1"),
      "BFBS",
      `${file}: schema ${schema.name} is not a .bfbs`
    );
  }
  assert.equal(
    new Set([...schemasById.values()].map((s) => s.name)).size,
    schemasById.size,
    `${file}: one schema per type`
  );
}

// The remote records decoded, paired with the messages they name (by
// channel id and sequence), against the remote fields expected per
// forwarded channel; in file order (`adjacent`), each record is also just
// before its message, at the same time.
function checkRemoteRecords(file, how, channelsById, messages, expected,
  adjacent) {
  const remote = new Map();
  const bySequence = new Map();
  for (const message of messages) {
    bySequence.set(`${message.channelId} ${message.sequence}`, message);
  }
  messages.forEach((message, i) => {
    if (channelsById.get(message.channelId).topic !== REMOTE_TOPIC) return;
    const record = decodeRemoteMessage(message.data);
    const paired = bySequence.get(`${record.channelId} ${record.queueIndex}`);
    assert.ok(paired, `${file} (${how}): remote record ${i} names no message`);
    assert.equal(paired.logTime, message.logTime,
      `${file} (${how}): remote record ${i} log time`);
    if (adjacent) {
      assert.equal(nextMessage(channelsById, messages, i), paired,
        `${file} (${how}): remote record ${i} is not just before its message`);
    }
    const key = keyOf(channelsById.get(record.channelId));
    if (!remote.has(key)) {
      remote.set(key, { monotonic_remote_times: [], realtime_remote_times: [],
        remote_queue_indexes: [], source_boot_uuids: [] });
    }
    const got = remote.get(key);
    got.monotonic_remote_times.push(record.monotonicRemoteTime);
    got.realtime_remote_times.push(record.realtimeRemoteTime);
    got.remote_queue_indexes.push(record.remoteQueueIndex);
    got.source_boot_uuids.push(record.sourceBootUuid);
  });
  for (const e of expected) {
    if (!e.remote) continue;
    assert.deepEqual(remote.get(`${e.topic} ${e.type}`), e.remote,
      `${file} (${how}): remote fields of ${e.topic} ${e.type}`);
  }
}

// The origins records decoded, paired with the messages they name (by
// channel id and sequence): every message's origins (a record's, or none)
// against those expected per channel; in file order (`adjacent`), each
// record is also just before its message, at the same time.
function checkOriginsRecords(file, how, channelsById, messages, expected,
  adjacent) {
  const byKey = new Map();
  for (const message of messages) {
    byKey.set(`${message.channelId} ${message.sequence} ${message.logTime}`,
      message);
  }
  const paired = new Map();
  messages.forEach((message, i) => {
    if (channelsById.get(message.channelId).topic !== ORIGINS_TOPIC) return;
    const record = decodeMessageOrigins(message.data);
    const key = `${record.channelId} ${record.queueIndex}`;
    const named = byKey.get(`${key} ${message.logTime}`);
    assert.ok(named, `${file} (${how}): origins record ${i} names no message`);
    if (adjacent) {
      assert.equal(messages[i + 1], named,
        `${file} (${how}): origins record ${i} is not just before its message`);
    }
    paired.set(key, record.text);
  });
  const origins = new Map();
  for (const message of messages) {
    const channel = channelsById.get(message.channelId);
    if (!channel.metadata.has("aos_type")) continue;
    const key = keyOf(channel);
    if (!origins.has(key)) origins.set(key, []);
    origins.get(key).push(
      paired.get(`${message.channelId} ${message.sequence}`) ?? "");
  }
  for (const e of expected) {
    if (!e.origins) continue;
    assert.deepEqual(origins.get(`${e.topic} ${e.type}`), e.origins,
      `${file} (${how}): origins of ${e.topic} ${e.type}`);
  }
}

function checkMessages(file, how, channelsById, messages, expected) {
  const times = new Map();
  for (const message of messages) {
    const key = keyOf(channelsById.get(message.channelId));
    if (!times.has(key)) times.set(key, { log: [], publish: [] });
    times.get(key).log.push(message.logTime.toString());
    times.get(key).publish.push(message.publishTime.toString());
  }
  for (const e of expected) {
    const got = times.get(`${e.topic} ${e.type}`) ?? { log: [], publish: [] };
    assert.equal(got.log.length, e.log_times.length,
      `${file} (${how}): ${e.topic} ${e.type} message count`);
    assert.deepEqual(got.log, e.log_times, `${file} (${how}): log times`);
    assert.deepEqual(got.publish, e.publish_times,
      `${file} (${how}): publish times`);
  }
  // Log time order overall.
  for (let i = 1; i < messages.length; ++i) {
    assert.ok(messages[i - 1].logTime <= messages[i].logTime,
      `${file} (${how}): message ${i} out of log time order`);
  }
}

async function checkIndexed(file, bytes, expected, decompressHandlers) {
  const readable = {
    size: async () => BigInt(bytes.length),
    read: async (offset, length) =>
      bytes.subarray(Number(offset), Number(offset + length)),
  };
  const reader = await McapIndexedReader.Initialize({
    readable,
    decompressHandlers,
  });
  assert.equal(reader.header.library, "aos");
  checkSchemasAndChannels(file, reader.schemasById, reader.channelsById,
    expected);
  assert.ok(reader.chunkIndexes.length > 1, `${file}: several chunks`);
  const total = expected.reduce((n, e) => n + e.log_times.length, 0);
  assert.equal(reader.statistics.messageCount, BigInt(total),
    `${file}: statistics.messageCount`);
  for (const [id, count] of reader.statistics.channelMessageCounts) {
    const channel = reader.channelsById.get(id);
    const e = expected.find((x) => `${x.topic} ${x.type}` === keyOf(channel));
    assert.equal(count, BigInt(e.log_times.length),
      `${file}: statistics for ${channel.topic}`);
  }
  assert.deepEqual(reader.attachmentIndexes.map((a) => a.name),
    ["aos_config.bfbs"], `${file}: attachments`);
  assert.ok(reader.metadataIndexes.some((m) => m.name === "aos_logger"),
    `${file}: aos_logger metadata`);
  const messages = [];
  for await (const message of reader.readMessages()) messages.push(message);
  checkMessages(file, "indexed", reader.channelsById, messages, expected);
  checkRemoteRecords(file, "indexed", reader.channelsById, messages, expected,
    false);
  checkOriginsRecords(file, "indexed", reader.channelsById, messages, expected,
    false);
  checkDecodedLikeFoxglove(file, reader.schemasById, reader.channelsById,
    messages, expected);
  return messages.length;
}

function checkStream(file, bytes, expected, decompressHandlers) {
  const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  reader.append(bytes);
  const schemasById = new Map();
  const channelsById = new Map();
  const messages = [];
  let footer = false;
  for (let record; (record = reader.nextRecord()); ) {
    if (record.type === "Schema") schemasById.set(record.id, record);
    if (record.type === "Channel") channelsById.set(record.id, record);
    if (record.type === "Message") messages.push(record);
    if (record.type === "Footer") footer = true;
  }
  assert.ok(footer && reader.done(), `${file}: stream ends with a footer`);
  checkSchemasAndChannels(file, schemasById, channelsById, expected);
  // The stream is in file order; our chunks are in log time order too.
  checkMessages(file, "stream", channelsById, messages, expected);
  checkRemoteRecords(file, "stream", channelsById, messages, expected, true);
  checkOriginsRecords(file, "stream", channelsById, messages, expected, true);
}

// A log cut short (a killed logger): the MCAP reader streams the chunks
// before the cut, and they hold a prefix of every channel's messages.
function checkCutShort(file, bytes, expected, decompressHandlers) {
  const reader = new McapStreamReader({ decompressHandlers, validateCrcs: true });
  reader.append(bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  const channelsById = new Map();
  const times = new Map();
  let count = 0;
  for (let record; (record = reader.nextRecord()); ) {
    if (record.type === "Channel") channelsById.set(record.id, record);
    if (record.type !== "Message") continue;
    const key = keyOf(channelsById.get(record.channelId));
    if (!times.has(key)) times.set(key, []);
    times.get(key).push(record.logTime.toString());
    ++count;
  }
  assert.ok(!reader.done(), `${file} cut short: the reader noticed the cut`);
  const total = expected.reduce((n, e) => n + e.log_times.length, 0);
  // At 60% of the bytes, a good part of the messages: less than 60%, as
  // the schemas and the config (which grow with the config) come first.
  assert.ok(count > total / 4 && count < total,
    `${file} cut short: ${count} of ${total} messages read`);
  for (const e of expected) {
    const got = times.get(`${e.topic} ${e.type}`) ?? [];
    assert.deepEqual(got, e.log_times.slice(0, got.length),
      `${file} cut short: ${e.topic} ${e.type} is a prefix`);
  }
  return count;
}

async function main() {
  const [expectedPath, ...files] = process.argv.slice(2);
  const expected = JSON.parse(fs.readFileSync(expectedPath, "utf8"));
  const decompressHandlers = await loadDecompressHandlers();
  for (const file of files) {
    const bytes = new Uint8Array(fs.readFileSync(file));
    const count = await checkIndexed(file, bytes, expected, decompressHandlers);
    checkStream(file, bytes, expected, decompressHandlers);
    const cut = checkCutShort(file, bytes, expected, decompressHandlers);
    console.log(`${file}: ${count} messages on ${expected.length} channels ` +
      "read by @mcap/core as aos logged them (indexed and streamed), " +
      "decoded as Foxglove does; " +
      `cut at 60%: the first ${cut}`);
  }
}

main().catch((error) => {
  console.error(`check_mcap.js: ${error.message}`);
  process.exit(1);
});
