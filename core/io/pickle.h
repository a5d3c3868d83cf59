#pragma once
// A restricted reader of the Python pickles inside PyTorch checkpoints (torch.save of a state dict).
//
// A pickle is a program for a stack machine that may import and call anything, so this never runs one: it
// interprets only the opcodes that build data (numbers, strings, tuples, lists, dicts, memo) and admits only
// the globals a state dict needs — collections.OrderedDict, torch._utils._rebuild_tensor_v2 / _rebuild_tensor
// / _rebuild_parameter and the torch.*Storage types. Any other global is refused by name, before anything
// else happens; so are unknown opcodes. Values live in an arena owned by the reader (no reference cycles, no
// recursion), every length is checked against the bytes that remain, and the work is linear in the input.
//
//   pickle::Reader reader(bytes, size, "'pytorch_model.bin'");
//   const size_t top = reader.run();          // index of the unpickled object
//   reader.value(top).kind == pickle::Kind::Dict ...
//
// Tensors and storages come out as descriptions (StorageRef, TensorRef); the checkpoint reader
// (core/io/torch_checkpoint.h) resolves the storages to bytes.

#include "core/io/dtype.h"
#include "core/tensor/tensor.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace attnlens::pickle {

enum class Kind { None, Bool, Int, BigInt, Float, String, Bytes, Tuple, List, Dict, Global, Storage, Tensor };

struct Value {
    Kind kind = Kind::None;
    int64_t integer = 0;       // Bool, Int; Storage / Tensor: index into Reader::storages() / tensors()
    double real = 0.0;         // Float
    std::string text;          // String, Bytes; BigInt: little-endian two's complement; Global: "module.name"
    std::vector<size_t> items; // Tuple, List; Dict: key, value, key, value, ... (insertion order)
};

// A storage a persistent id names: ('storage', torch.<Type>Storage, key, location, numel[, view]).
struct StorageRef {
    DType dtype = DType::F32;
    std::string key;
    std::string location;
    int64_t numel = 0;      // elements of the (root) storage
    bool view = false;      // legacy format only: a view on the root storage `key`
    int64_t viewOffset = 0; // elements into the root
    int64_t viewNumel = 0;
};

// A tensor built by _rebuild_tensor_v2(storage, offset, size, stride, ...).
struct TensorRef {
    size_t storage = 0; // index into Reader::storages()
    int64_t offset = 0; // elements
    Shape shape;
    std::vector<int64_t> strides;
};

class Reader {
public:
    // `where` names the file in errors. The bytes must outlive the reader.
    Reader(const unsigned char* data, size_t size, std::string where);

    // Interprets one pickle from the current position to its STOP; returns the index of the result.
    // Throws attnlens::Error (naming `where`, the offset and the problem) on anything not admitted.
    size_t run();
    size_t position() const { return m_pos; } // after run(): the first byte past the STOP

    const Value& value(size_t index) const { return m_arena.at(index); }
    const std::vector<StorageRef>& storages() const { return m_storages; }
    const std::vector<TensorRef>& tensors() const { return m_tensors; }

private:
    [[noreturn]] void fail(const std::string& what) const;
    const unsigned char* take(size_t n);
    uint64_t readLE(size_t n);
    size_t push(Value v);
    size_t pop();
    std::vector<size_t> popToMark();
    size_t& top();
    void admitGlobal(const std::string& module, const std::string& name);
    size_t reduce(size_t callable, size_t args);
    size_t persistentLoad(size_t id);
    // One opcode each, by group; false: not of the group (run() refuses an opcode no group takes).
    bool stackOp(unsigned char code);
    bool scalarOp(unsigned char code);
    bool containerOp(unsigned char code);
    bool callOp(unsigned char code);
    Value readLong(size_t bytes);
    int64_t asInt(size_t index, const char* what) const;
    const std::string& asString(size_t index, const char* what) const;
    std::vector<int64_t> asIntTuple(size_t index, const char* what) const;

    const unsigned char* m_data;
    size_t m_size;
    size_t m_pos = 0;
    size_t m_opcodeAt = 0;
    std::string m_where;
    std::vector<Value> m_arena;
    std::vector<size_t> m_stack;
    std::vector<size_t> m_marks;
    std::unordered_map<uint64_t, size_t> m_memo;
    std::vector<StorageRef> m_storages;
    std::vector<TensorRef> m_tensors;
};

} // namespace attnlens::pickle
