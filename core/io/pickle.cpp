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

// The opcodes a state dict's pickle uses (pickletools' names); every other one is refused.
namespace op {
constexpr unsigned char Proto = 0x80, Frame = 0x95, Stop = '.', Mark = '(', Pop = '0', PopMark = '1',
                        Dup = '2';
constexpr unsigned char None = 'N', NewTrue = 0x88, NewFalse = 0x89;
constexpr unsigned char BinInt = 'J', BinInt1 = 'K', BinInt2 = 'M', Long1 = 0x8a, Long4 = 0x8b,
                        BinFloat = 'G';
constexpr unsigned char BinUnicode = 'X', ShortBinUnicode = 0x8c, BinUnicode8 = 0x8d, BinString = 'T',
                        ShortBinString = 'U', BinBytes = 'B', ShortBinBytes = 'C', BinBytes8 = 0x8e;
constexpr unsigned char EmptyTuple = ')', EmptyList = ']', EmptyDict = '}', Tuple = 't', List = 'l',
                        Dict = 'd', Tuple1 = 0x85, Tuple2 = 0x86, Tuple3 = 0x87;
constexpr unsigned char Append = 'a', Appends = 'e', SetItem = 's', SetItems = 'u';
constexpr unsigned char BinPut = 'q', LongBinPut = 'r', Memoize = 0x94, BinGet = 'h', LongBinGet = 'j';
constexpr unsigned char Global = 'c', StackGlobal = 0x93, Reduce = 'R', Build = 'b', BinPersId = 'Q';
} // namespace op

size_t Reader::run() {
    m_stack.clear();
    m_marks.clear();
    m_memo.clear();
    for (;;) {
        m_opcodeAt = m_pos;
        const unsigned char code = *take(1);
        if (code == op::Stop) {
            const size_t result = pop();
            if (!m_marks.empty() || !m_stack.empty()) fail("STOP with values left on the stack");
            return result;
        }
        if (!stackOp(code) && !scalarOp(code) && !containerOp(code) && !callOp(code))
            fail("opcode " + hexByte(code) + " is not admitted (only opcodes that build data are read)");
    }
}

// Protocol, framing, the stack, marks and the memo.
bool Reader::stackOp(unsigned char code) {
    switch (code) {
    case op::Proto: {
        const unsigned char version = *take(1);
        if (version > 5) fail("pickle protocol " + std::to_string(version) + " is not known");
        return true;
    }
    case op::Frame:
        (void)take(8); // a length hint only
        return true;
    case op::Mark:
        m_marks.push_back(m_stack.size());
        return true;
    case op::Pop:
        (void)pop();
        return true;
    case op::PopMark:
        (void)popToMark();
        return true;
    case op::Dup: {
        const size_t duplicate = top();
        m_stack.push_back(duplicate);
        return true;
    }
    case op::BinPut:
    case op::LongBinPut:
        m_memo[readLE(code == op::BinPut ? 1 : 4)] = top();
        return true;
    case op::Memoize:
        m_memo[m_memo.size()] = top();
        return true;
    case op::BinGet:
    case op::LongBinGet: {
        const uint64_t key = readLE(code == op::BinGet ? 1 : 4);
        const auto it = m_memo.find(key);
        if (it == m_memo.end()) fail("memo entry " + std::to_string(key) + " was never stored");
        m_stack.push_back(it->second);
        return true;
    }
    default:
        return false;
    }
}

// None, booleans, integers (LONG1 / LONG4: little-endian two's complement), floats, strings and bytes.
bool Reader::scalarOp(unsigned char code) {
    Value v;
    switch (code) {
    case op::None:
        break;
    case op::NewTrue:
    case op::NewFalse:
        v.kind = Kind::Bool;
        v.integer = code == op::NewTrue;
        break;
    case op::BinInt:
        v.kind = Kind::Int;
        v.integer = static_cast<int32_t>(static_cast<uint32_t>(readLE(4)));
        break;
    case op::BinInt1:
    case op::BinInt2:
        v.kind = Kind::Int;
        v.integer = static_cast<int64_t>(readLE(code == op::BinInt1 ? 1 : 2));
        break;
    case op::Long1:
    case op::Long4:
        v = readLong(static_cast<size_t>(readLE(code == op::Long1 ? 1 : 4)));
        break;
    case op::BinFloat: { // big-endian
        const unsigned char* p = take(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i)
            bits = (bits << 8) | p[i];
        v.kind = Kind::Float;
        v.real = std::bit_cast<double>(bits);
        break;
    }
    case op::BinUnicode:
    case op::ShortBinUnicode:
    case op::BinUnicode8:
    case op::BinString:
    case op::ShortBinString:
    case op::BinBytes:
    case op::ShortBinBytes:
    case op::BinBytes8: {
        const bool shortLength =
            code == op::ShortBinUnicode || code == op::ShortBinString || code == op::ShortBinBytes;
        const bool longLength = code == op::BinUnicode8 || code == op::BinBytes8;
        const uint64_t n = readLE(shortLength ? 1 : longLength ? 8 : 4);
        if (n > m_size - m_pos) fail("a string of " + std::to_string(n) + " bytes runs past the data");
        const unsigned char* p = take(static_cast<size_t>(n));
        const bool bytes = code == op::BinBytes || code == op::ShortBinBytes || code == op::BinBytes8;
        v.kind = bytes ? Kind::Bytes : Kind::String;
        v.text.assign(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
        break;
    }
    default:
        return false;
    }
    push(std::move(v));
    return true;
}

Value Reader::readLong(size_t n) {
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
    return v;
}

// Tuples, lists and dicts: built empty, from a mark or the top 1–3 values, and filled.
bool Reader::containerOp(unsigned char code) {
    switch (code) {
    case op::EmptyTuple:
    case op::EmptyList:
    case op::EmptyDict:
    case op::Tuple:
    case op::List:
    case op::Dict: {
        Value v;
        v.kind = code == op::EmptyTuple || code == op::Tuple ? Kind::Tuple
                 : code == op::EmptyList || code == op::List ? Kind::List
                                                             : Kind::Dict;
        if (code == op::Tuple || code == op::List || code == op::Dict) v.items = popToMark();
        if (code == op::Dict && v.items.size() % 2 != 0) fail("DICT with an odd number of items");
        push(std::move(v));
        return true;
    }
    case op::Tuple1:
    case op::Tuple2:
    case op::Tuple3: {
        Value v;
        v.kind = Kind::Tuple;
        v.items.resize(static_cast<size_t>(code - op::Tuple1 + 1));
        for (size_t i = v.items.size(); i-- > 0;)
            v.items[i] = pop();
        push(std::move(v));
        return true;
    }
    case op::Append:
    case op::Appends: {
        const std::vector<size_t> items = code == op::Append ? std::vector<size_t>{pop()} : popToMark();
        Value& list = m_arena[top()];
        if (list.kind != Kind::List)
            fail(std::string(code == op::Append ? "APPEND" : "APPENDS") + " to something that is not a list");
        list.items.insert(list.items.end(), items.begin(), items.end());
        return true;
    }
    case op::SetItem:
    case op::SetItems: {
        std::vector<size_t> items = code == op::SetItems ? popToMark() : std::vector<size_t>{};
        if (code == op::SetItem) {
            const size_t value = pop();
            items = {pop(), value};
        }
        if (items.size() % 2 != 0) fail("SETITEMS with an odd number of items");
        Value& dict = m_arena[top()];
        if (dict.kind != Kind::Dict)
            fail(std::string(code == op::SetItem ? "SETITEM" : "SETITEMS") +
                 " on something that is not a dict");
        dict.items.insert(dict.items.end(), items.begin(), items.end());
        return true;
    }
    default:
        return false;
    }
}

// Globals (admitted ones only), REDUCE, BUILD and persistent ids (a tensor's storage).
bool Reader::callOp(unsigned char code) {
    switch (code) {
    case op::Global: { // "module\nname\n"
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
        return true;
    }
    case op::StackGlobal: {
        const size_t name = pop();
        const size_t module = pop();
        admitGlobal(asString(module, "STACK_GLOBAL's module"), asString(name, "STACK_GLOBAL's name"));
        return true;
    }
    case op::Reduce: {
        const size_t args = pop();
        const size_t callable = pop();
        const size_t result = reduce(callable, args);
        m_stack.push_back(result);
        return true;
    }
    case op::Build: { // an OrderedDict's instance state (the state dict's _metadata) is dropped
        (void)pop();
        if (m_arena[top()].kind != Kind::Dict) fail("BUILD on something other than an OrderedDict");
        return true;
    }
    case op::BinPersId: {
        const size_t id = pop();
        m_stack.push_back(persistentLoad(id));
        return true;
    }
    default:
        return false;
    }
}

} // namespace attnlens::pickle
