// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Writes the ONNX function's models: no model can be downloaded here, so each is a ModelProto
// encoded by hand (ONNX files are protobuf; the field numbers below are onnx/onnx.proto's).
//
//   node tools/functions/onnx/gen-models.js DIR [COUNT]      (COUNT default 12)
//
// Model i (model-00.onnx ...): y = Relu(x . W + b), x float[1, 2048], W float[2048, 2432]
// (19,922,944 bytes: ~19 MiB of raw_data), b float[2432], opset 13. W and b come from a
// xorshift32 generator seeded with i + 1, so every model differs. DIR/manifest.json lists each
// file with its size and the reference output for the fixed input x[k] = ((k % 7) - 3) / 8
// (computed here in float64; the handler sends that x, the test compares ONNX Runtime's y).
// Files already there with the right size and seed (manifest.json) are kept.
"use strict";

const fs = require("fs");
const path = require("path");

const K = 2048;
const N = 2432;
const VERSION = 1;	// bump when the graph changes: the manifest's files are then rewritten

// ---- protobuf wire format: varints, keys, length-delimited fields ----

function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return Buffer.from(out);
}

const key = (field, wire) => varint((field << 3) | wire);
const int = (field, n) => Buffer.concat([key(field, 0), varint(n)]);
const bytes = (field, buf) => Buffer.concat([key(field, 2), varint(buf.length), buf]);
const str = (field, s) => bytes(field, Buffer.from(s, "utf8"));
const msg = (field, parts) => bytes(field, Buffer.concat(parts));

// ---- onnx.proto messages ----

const FLOAT = 1;	// TensorProto.DataType.FLOAT

// TensorProto: dims 1, data_type 2, name 8, raw_data 9
function tensor(field, name, dims, data) {
  return msg(field, [...dims.map((d) => int(1, d)), int(2, FLOAT), str(8, name),
    bytes(9, Buffer.from(data.buffer, data.byteOffset, data.byteLength))]);
}

// ValueInfoProto: name 1, type 2 -> TypeProto.tensor_type 1 -> elem_type 1, shape 2 ->
// TensorShapeProto.dim 1 -> dim_value 1
function valueInfo(field, name, dims) {
  const shape = dims.map((d) => msg(1, [int(1, d)]));
  return msg(field, [str(1, name), msg(2, [msg(1, [int(1, FLOAT), msg(2, shape)])])]);
}

// NodeProto: input 1, output 2, name 3, op_type 4
function node(inputs, outputs, name, op) {
  return msg(1, [...inputs.map((s) => str(1, s)), ...outputs.map((s) => str(2, s)),
    str(3, name), str(4, op)]);
}

function xorshift32(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 4294967296;
  };
}

function weights(seed) {
  const rnd = xorshift32(0x9e3779b9 ^ seed);
  const w = new Float32Array(K * N);
  const b = new Float32Array(N);
  for (let i = 0; i < w.length; i++) w[i] = (rnd() - 0.5) / 16;
  for (let i = 0; i < N; i++) b[i] = (rnd() - 0.5) / 4;
  return { w, b };
}

function input() {
  const x = new Float32Array(K);
  for (let k = 0; k < K; k++) x[k] = ((k % 7) - 3) / 8;
  return x;
}

// The reference y for input(): float64 sums of float32 products (ONNX Runtime's float32 sums
// differ in the last bits; the test allows for that).
function reference(w, b) {
  const x = input();
  const y = new Float64Array(N);
  for (let k = 0; k < K; k++) {
    const xk = x[k];
    const row = k * N;
    for (let n = 0; n < N; n++) y[n] += xk * w[row + n];
  }
  let sum = 0;
  const head = [];
  for (let n = 0; n < N; n++) {
    const v = Math.max(0, y[n] + b[n]);
    sum += v;
    if (n < 4) head.push(v);
  }
  return { sum, head };
}

function model(seed) {
  const { w, b } = weights(seed);
  const graph = [
    node(["x", "W"], ["h"], "matmul", "MatMul"),
    node(["h", "B"], ["z"], "add", "Add"),
    node(["z"], ["y"], "relu", "Relu"),
    str(2, "peaktrace_onnx_" + seed),
    tensor(5, "W", [K, N], w),
    tensor(5, "B", [N], b),
    valueInfo(11, "x", [1, K]),
    valueInfo(12, "y", [1, N]),
  ];
  // ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8 (version 2)
  const proto = Buffer.concat([int(1, 8), str(2, "peaktrace gen-models.js"), msg(7, graph),
    msg(8, [int(2, 13)])]);
  return { proto, ref: reference(w, b) };
}

function main() {
  const dir = process.argv[2];
  const count = process.argv[3] ? Number(process.argv[3]) : 12;
  if (!dir || !Number.isInteger(count) || count < 1 || count > 100) {
    process.stderr.write("usage: node gen-models.js DIR [COUNT (1..100, default 12)]\n");
    process.exit(2);
  }
  fs.mkdirSync(dir, { recursive: true });
  const manifestPath = path.join(dir, "manifest.json");
  let old = null;
  try {
    old = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
  } catch (e) {
    old = null;
  }
  const models = [];
  let written = 0;
  for (let i = 0; i < count; i++) {
    const file = "model-" + String(i).padStart(2, "0") + ".onnx";
    const full = path.join(dir, file);
    const prev = old && old.version === VERSION && old.models && old.models[i];
    let size = -1;
    try {
      size = fs.statSync(full).size;
    } catch (e) {
      size = -1;
    }
    if (prev && prev.file === file && prev.bytes === size) {
      models.push(prev);
      continue;
    }
    const { proto, ref } = model(i + 1);
    fs.writeFileSync(full + ".tmp", proto);
    fs.renameSync(full + ".tmp", full);
    models.push({ id: i, file, bytes: proto.length, weight_bytes: K * N * 4, seed: i + 1,
      y_sum: ref.sum, y_head: ref.head });
    written++;
  }
  const manifest = { version: VERSION, k: K, n: N, models };
  fs.writeFileSync(manifestPath + ".tmp", JSON.stringify(manifest, null, 1) + "\n");
  fs.renameSync(manifestPath + ".tmp", manifestPath);
  process.stdout.write("gen-models: " + count + " models in " + dir + " (" + written + " written)\n");
}

module.exports = { input, K, N };

if (require.main === module) main();
