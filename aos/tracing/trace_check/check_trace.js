// Reads an aos_trace snapshot with TracerBench's model of Chrome trace
// events (@tracerbench/trace-model's buildModel, which groups events into
// processes and threads by their metadata and pairs what it must) and
// checks it against what aos says it wrote (expected.json from
// trace_check_writer):
//
//   node check_trace.js expected.json snapshot.json
//
// - every process and thread the metadata names, under those names;
// - per thread, the count of complete ("X") events: the handler runs,
//   counted by the timing report of the same window (not by the trace
//   writer), and every run inside the window;
// - every flow end ("f") has a flow start ("s") of the same id, earlier or
//   at the same time, and their number;
// - timestamps in microseconds inside the snapshot's window.
// Prints one line; exits 1 with the first difference.
"use strict";
const fs = require("fs");
const assert = require("assert/strict");
const { buildModel } = require("@tracerbench/trace-model");

const [expectedPath, snapshotPath] = process.argv.slice(2);
const expected = JSON.parse(fs.readFileSync(expectedPath, "utf8"));
const snapshot = JSON.parse(fs.readFileSync(snapshotPath, "utf8"));
const model = buildModel(snapshot);

const window = snapshot.otherData;
const beginUs = window.window_begin_ns / 1e3;
const endUs = window.window_end_ns / 1e3;

const found = {};
for (const process of model.processes) {
  const threads = {};
  for (const thread of process.threads) {
    threads[thread.name] = thread.events.filter((e) => e.ph === "X").length;
    for (const event of thread.events) {
      if (event.ph === "X") {
        assert.ok(event.end >= beginUs && event.start <= endUs,
          `${process.name} ${thread.name}: a run at ${event.start} us is ` +
          `outside the window [${beginUs}, ${endUs}]`);
      }
    }
  }
  found[process.name.replace(/ \(pid .*\)$/, "")] = threads;
}
for (const [name, threads] of Object.entries(expected.processes)) {
  assert.ok(name in found, `no process ${name}; found ${Object.keys(found)}`);
  for (const [thread, count] of Object.entries(threads)) {
    assert.equal(found[name][thread], count,
      `${name} ${thread}: ${found[name][thread]} runs, the timing report ` +
      `counted ${count}`);
  }
}

const starts = new Map();
let ends = 0;
for (const event of model.events) {
  if (event.ph === "s") starts.set(event.traceEvent.id, event.start);
}
for (const event of model.events) {
  if (event.ph !== "f") continue;
  ++ends;
  const id = event.traceEvent.id;
  assert.ok(starts.has(id), `flow end ${id} without a start`);
  assert.ok(starts.get(id) <= event.start,
    `flow ${id} ends before it starts`);
}
assert.equal(starts.size, expected.flows, "flow starts");
assert.equal(ends, expected.flows, "flow ends");
console.log(`${snapshotPath}: ${model.processes.length} processes, ` +
  `${model.events.length} events, ${ends} flows: as aos wrote them`);
