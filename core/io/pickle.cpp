#include "core/io/pickle.h"

#include "core/util/error.h"

#include <bit>
#include <cstring>

namespace attnlens::pickle {

namespace {

// More values than any state dict needs (a 10 000-tensor checkpoint makes ~250 000); bounds the memory a
// hostile pickle can claim.
constexpr size_t kMaxValues = size_t{1} << 22;
constexpr size_t kMaxGlobalName = 256;

struct StorageType {
    const char* name;
    DType dtype;
};
constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", DType::F32},  {"HalfStorage", DType::F16}, {"BFloat16Storage", DType::BF16},
    {"DoubleStorage", DType::F64}, {"LongStorage", DType::I64}, {"IntStorage", DType::I32},
    {"ShortStorage", DType::I16},  {"CharStorage", DType::I8},  {"ByteStorage", DType::U8},
    {"BoolStorage", DType::Bool},
};

bool storageDType(const std::string& global, DType& dtype) {
    for (const auto& t : kStorageTypes)
        if (global == std::string("torch.") + t.name) {
            dtype = t.dtype;
            return true;
        }
    return false;
}

constexpr const char* kOrderedDict = "collections.OrderedDict";
constexpr const char* kRebuildTensorV2 = "torch._utils._rebuild_tensor_v2";
constexpr const char* kRebuildTensor = "torch._utils._rebuild_tensor";
constexpr const char* kRebuildParameter = "torch._utils._rebuild_parameter";

std::string hexByte(unsigned char c) {
    static const char* digits = "0123456789abcdef";
    return std::string("0x") + digits[c >> 4] + digits[c & 15];
}

} // namespace

Reader::Reader(const unsigned char* data, size_t size, std::string where)
    : m_data(data), m_size(size), m_where(std::move(where)) {}

void Reader::fail(const std::string& what) const {
    throw Error(m_where + ": pickle byte " + std::to_string(m_opcodeAt) + ": " + what);
}

const unsigned char* Reader::take(size_t n) {
    if (n > m_size - m_pos)
        fail("needs " + std::to_string(n) + " more bytes, the data ends (truncated file?)");
    const unsigned char* p = m_data + m_pos;
    m_pos += n;
    return p;
}

uint64_t Reader::readLE(size_t n) {
    const unsigned char* p = take(n);
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;)
        v = (v << 8) | p[i];
    return v;
}

size_t Reader::push(Value v) {
    if (m_arena.size() >= kMaxValues) fail("more than " + std::to_string(kMaxValues) + " values");
    m_arena.push_back(std::move(v));
    m_stack.push_back(m_arena.size() - 1);
    return m_arena.size() - 1;
}

size_t Reader::pop() {
    const size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (m_stack.size() <= floor) fail("pops an empty stack");
    const size_t v = m_stack.back();
    m_stack.pop_back();
    return v;
}

size_t& Reader::top() {
    const size_t floor = m_marks.empty() ? 0 : m_marks.back();
    if (m_stack.size() <= floor) fail("reads an empty stack");
    return m_stack.back();
}

std::vector<size_t> Reader::popToMark() {
    if (m_marks.empty()) fail("no MARK to pop to");
    const size_t mark = m_marks.back();
    m_marks.pop_back();
    std::vector<size_t> items(m_stack.begin() + static_cast<std::ptrdiff_t>(mark), m_stack.end());
    m_stack.resize(mark);
    return items;
}

int64_t Reader::asInt(size_t index, const char* what) const {
    const Value& v = m_arena[index];
    if (v.kind != Kind::Int && v.kind != Kind::Bool) fail(std::string(what) + " must be an integer");
    return v.integer;
}

const std::string& Reader::asString(size_t index, const char* what) const {
    const Value& v = m_arena[index];
    if (v.kind != Kind::String) fail(std::string(what) + " must be a string");
    return v.text;
}

std::vector<int64_t> Reader::asIntTuple(size_t index, const char* what) const {
    const Value& v = m_arena[index];
    if (v.kind != Kind::Tuple && v.kind != Kind::List)
        fail(std::string(what) + " must be a tuple of integers");
    std::vector<int64_t> out;
    out.reserve(v.items.size());
    for (const size_t i : v.items)
        out.push_back(asInt(i, what));
    return out;
}

void Reader::admitGlobal(const std::string& module, const std::string& name) {
    const std::string global = module + "." + name;
    DType dtype;
    if (global == kOrderedDict || global == kRebuildTensorV2 || global == kRebuildTensor ||
        global == kRebuildParameter || storageDType(global, dtype)) {
        Value v;
        v.kind = Kind::Global;
        v.text = global;
        push(std::move(v));
        return;
    }
    fail("refused: the pickle imports '" + global +
         "', which a state dict never needs (only collections.OrderedDict, torch._utils._rebuild_tensor_v2 "
         "and "
         "torch storage types are admitted); nothing in the file was run");
}

size_t Reader::persistentLoad(size_t id) {
    const Value& pid = m_arena[id];
    if (pid.kind != Kind::Tuple || pid.items.size() < 5 || pid.items.size() > 6)
        fail("a persistent id must be ('storage', type, key, location, size[, view])");
    if (asString(pid.items[0], "the persistent id's tag") != "storage")
        fail("persistent id of kind '" + m_arena[pid.items[0]].text + "', expected 'storage'");
    const Value& type = m_arena[pid.items[1]];
    StorageRef ref;
    if (type.kind != Kind::Global || !storageDType(type.text, ref.dtype))
        fail("a persistent id's storage type must be a torch storage class");
    ref.key = asString(pid.items[2], "a storage key");
    ref.location = asString(pid.items[3], "a storage location");
    ref.numel = asInt(pid.items[4], "a storage size");
    if (ref.numel < 0) fail("negative storage size");
    if (pid.items.size() == 6 && m_arena[pid.items[5]].kind != Kind::None) {
        const Value& view = m_arena[pid.items[5]];
        if (view.kind != Kind::Tuple || view.items.size() != 3)
            fail("a storage view must be (key, offset, size)");
        ref.view = true;
        (void)asString(view.items[0], "a view key");
        ref.viewOffset = asInt(view.items[1], "a view offset");
        ref.viewNumel = asInt(view.items[2], "a view size");
        if (ref.viewOffset < 0 || ref.viewNumel < 0 || ref.viewOffset > ref.numel ||
            ref.viewNumel > ref.numel - ref.viewOffset)
            fail("a storage view lies outside its storage");
    }
    m_storages.push_back(std::move(ref));
    if (m_arena.size() >= kMaxValues) fail("too many values");
    Value v;
    v.kind = Kind::Storage;
    v.integer = static_cast<int64_t>(m_storages.size() - 1);
    m_arena.push_back(std::move(v));
    return m_arena.size() - 1;
}

size_t Reader::reduce(size_t callable, size_t argsIndex) {
    const Value& fn = m_arena[callable];
    const Value& args = m_arena[argsIndex];
    if (fn.kind != Kind::Global) fail("REDUCE calls something that is not an admitted global");
    if (args.kind != Kind::Tuple) fail("REDUCE's arguments must be a tuple");
    const std::vector<size_t> a = args.items; // copy: the arena may grow below
    Value out;
    if (fn.text == kOrderedDict) {
        if (!a.empty()) fail("OrderedDict is only admitted without arguments");
        out.kind = Kind::Dict;
    } else if (fn.text == kRebuildTensorV2 || fn.text == kRebuildTensor) {
        const bool v2 = fn.text == kRebuildTensorV2;
        if (v2 ? (a.size() < 6 || a.size() > 7) : a.size() != 4)
            fail(fn.text + " with " + std::to_string(a.size()) + " arguments");
        const Value& storage = m_arena[a[0]];
        if (storage.kind != Kind::Storage) fail(fn.text + ": the first argument must be a storage");
        TensorRef t;
        t.storage = static_cast<size_t>(storage.integer);
        t.offset = asInt(a[1], "a tensor's storage offset");
        t.shape = asIntTuple(a[2], "a tensor's size");
        t.strides = asIntTuple(a[3], "a tensor's stride");
        if (t.offset < 0) fail("negative storage offset");
        if (t.shape.size() != t.strides.size()) fail("a tensor's size and stride differ in length");
        m_tensors.push_back(std::move(t));
        out.kind = Kind::Tensor;
        out.integer = static_cast<int64_t>(m_tensors.size() - 1);
    } else if (fn.text == kRebuildParameter) {
        if (a.size() != 3 || m_arena[a[0]].kind != Kind::Tensor) fail(fn.text + " must wrap a tensor");
        out = m_arena[a[0]];
    } else {
        fail("'" + fn.text + "' is a type, not called by a state dict");
    }
    if (m_arena.size() >= kMaxValues) fail("too many values");
    m_arena.push_back(std::move(out));
    return m_arena.size() - 1;
}

size_t Reader::run() {
    m_stack.clear();
    m_marks.clear();
    m_memo.clear();
    for (;;) {
        m_opcodeAt = m_pos;
        const unsigned char op = *take(1);
        switch (op) {
        case 0x80: { // PROTO
            const unsigned char version = *take(1);
            if (version > 5) fail("pickle protocol " + std::to_string(version) + " is not known");
            break;
        }
        case 0x95:
            (void)take(8);
            break;  // FRAME: a length hint only
        case '.': { // STOP
            const size_t result = pop();
            if (!m_marks.empty() || !m_stack.empty()) fail("STOP with values left on the stack");
            return result;
        }
        case '(':
            m_marks.push_back(m_stack.size());
            break;
        case '0':
            (void)pop();
            break;
        case '1':
            (void)popToMark();
            break;
        case '2': {
            const size_t duplicate = top();
            m_stack.push_back(duplicate);
            break;
        }
        case 'N':
            push({});
            break;
        case 0x88:
        case 0x89: {
            Value v;
            v.kind = Kind::Bool;
            v.integer = op == 0x88;
            push(std::move(v));
            break;
        }
        case 'J':
        case 'K':
        case 'M': {
            Value v;
            v.kind = Kind::Int;
            if (op == 'J')
                v.integer = static_cast<int32_t>(static_cast<uint32_t>(readLE(4)));
            else
                v.integer = static_cast<int64_t>(readLE(op == 'K' ? 1 : 2));
            push(std::move(v));
            break;
        }
        case 0x8a:
        case 0x8b: { // LONG1, LONG4: little-endian two's complement
            const auto n = static_cast<size_t>(readLE(op == 0x8a ? 1 : 4));
            const unsigned char* p = take(n);
            Value v;
            if (n <= 8) {
                uint64_t bits = 0;
                for (size_t i = n; i-- > 0;)
                    bits = (bits << 8) | p[i];
                if (n > 0 && n < 8 && (p[n - 1] & 0x80u)) bits |= ~uint64_t{0} << (8 * n); // sign-extend
                v.kind = Kind::Int;
                v.integer = static_cast<int64_t>(bits);
            } else {
                v.kind = Kind::BigInt;
                v.text.assign(reinterpret_cast<const char*>(p), n);
            }
            push(std::move(v));
            break;
        }
        case 'G': { // BINFLOAT, big-endian
            const unsigned char* p = take(8);
            uint64_t bits = 0;
            for (int i = 0; i < 8; ++i)
                bits = (bits << 8) | p[i];
            Value v;
            v.kind = Kind::Float;
            v.real = std::bit_cast<double>(bits);
            push(std::move(v));
            break;
        }
        case 'X':
        case 0x8c:
        case 0x8d:
        case 'T':
        case 'U':
        case 'B':
        case 'C':
        case 0x8e: {
            size_t lengthBytes = 4;
            if (op == 0x8c || op == 'U' || op == 'C') lengthBytes = 1;
            if (op == 0x8d || op == 0x8e) lengthBytes = 8;
            const uint64_t n = readLE(lengthBytes);
            if (n > m_size - m_pos) fail("a string of " + std::to_string(n) + " bytes runs past the data");
            const unsigned char* p = take(static_cast<size_t>(n));
            Value v;
            v.kind = (op == 'B' || op == 'C' || op == 0x8e) ? Kind::Bytes : Kind::String;
            v.text.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
            push(std::move(v));
            break;
        }
        case ')':
        case ']':
        case '}': {
            Value v;
            v.kind = op == ')' ? Kind::Tuple : op == ']' ? Kind::List : Kind::Dict;
            push(std::move(v));
            break;
        }
        case 't':
        case 'l':
        case 'd': {
            Value v;
            v.kind = op == 't' ? Kind::Tuple : op == 'l' ? Kind::List : Kind::Dict;
            v.items = popToMark();
            if (op == 'd' && v.items.size() % 2 != 0) fail("DICT with an odd number of items");
            push(std::move(v));
            break;
        }
        case 0x85:
        case 0x86:
        case 0x87: {
            const size_t n = static_cast<size_t>(op - 0x84);
            Value v;
            v.kind = Kind::Tuple;
            v.items.resize(n);
            for (size_t i = n; i-- > 0;)
                v.items[i] = pop();
            push(std::move(v));
            break;
        }
        case 'a': {
            const size_t item = pop();
            Value& list = m_arena[top()];
            if (list.kind != Kind::List) fail("APPEND to something that is not a list");
            list.items.push_back(item);
            break;
        }
        case 'e': {
            const std::vector<size_t> items = popToMark();
            Value& list = m_arena[top()];
            if (list.kind != Kind::List) fail("APPENDS to something that is not a list");
            list.items.insert(list.items.end(), items.begin(), items.end());
            break;
        }
        case 's': {
            const size_t value = pop();
            const size_t key = pop();
            Value& dict = m_arena[top()];
            if (dict.kind != Kind::Dict) fail("SETITEM on something that is not a dict");
            dict.items.push_back(key);
            dict.items.push_back(value);
            break;
        }
        case 'u': {
            const std::vector<size_t> items = popToMark();
            if (items.size() % 2 != 0) fail("SETITEMS with an odd number of items");
            Value& dict = m_arena[top()];
            if (dict.kind != Kind::Dict) fail("SETITEMS on something that is not a dict");
            dict.items.insert(dict.items.end(), items.begin(), items.end());
            break;
        }
        case 'q':
            m_memo[readLE(1)] = top();
            break;
        case 'r':
            m_memo[readLE(4)] = top();
            break;
        case 0x94:
            m_memo[m_memo.size()] = top();
            break; // MEMOIZE
        case 'h':
        case 'j': {
            const uint64_t key = readLE(op == 'h' ? 1 : 4);
            const auto it = m_memo.find(key);
            if (it == m_memo.end()) fail("memo entry " + std::to_string(key) + " was never stored");
            m_stack.push_back(it->second);
            break;
        }
        case 'c': { // GLOBAL: "module\nname\n"
            std::string parts[2];
            for (auto& part : parts) {
                for (;;) {
                    const char ch = static_cast<char>(*take(1));
                    if (ch == '\n') break;
                    if (part.size() >= kMaxGlobalName) fail("a global's name is too long");
                    part.push_back(ch);
                }
            }
            admitGlobal(parts[0], parts[1]);
            break;
        }
        case 0x93: { // STACK_GLOBAL
            const size_t name = pop();
            const size_t module = pop();
            admitGlobal(asString(module, "STACK_GLOBAL's module"), asString(name, "STACK_GLOBAL's name"));
            break;
        }
        case 'R': {
            const size_t args = pop();
            const size_t callable = pop();
            const size_t result = reduce(callable, args);
            m_stack.push_back(result);
            break;
        }
        case 'b': { // BUILD: an OrderedDict's instance state (the state dict's _metadata) is dropped
            const size_t state = pop();
            (void)state;
            if (m_arena[top()].kind != Kind::Dict) fail("BUILD on something other than an OrderedDict");
            break;
        }
        case 'Q': {
            const size_t id = pop();
            m_stack.push_back(persistentLoad(id));
            break;
        }
        default:
            fail("opcode " + hexByte(op) + " is not admitted (only opcodes that build data are read)");
        }
    }
}

} // namespace attnlens::pickle
