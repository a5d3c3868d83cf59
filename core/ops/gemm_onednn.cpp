// Linear layers on oneDNN's matmul (Debian's libdnnl, v2.6): the weight is reordered once, at load,
// into the blocked layout oneDNN's own kernel chooses for this CPU (runtime dispatch: AVX2, AVX-512,
// AVX-512 + bf16, AMX), and every call runs a matmul primitive on it. Measured on an AVX-512 EPYC,
// one thread, ViT-B/16's shapes: 190–215 GFLOP/s against 165–190 for Eigen's AVX-512 kernel; a
// [4, 512] × [512, 58101] beam step 75 GFLOP/s against 27.
//
// BF16 (LinearPrecision::Bf16, opt-in): the weight is packed as bfloat16 and each input is rounded to
// bfloat16 by a reorder before the matmul, which accumulates in float32 and writes float32 — half the
// bytes a decoder step streams, twice the arithmetic rate on CPUs with AVX512_BF16.
//
// Primitives are created per row count (and row strides) and kept with the weight; oneDNN's own
// primitive cache makes a re-creation cost ~5 µs. oneDNN computes on OpenMP threads: each call sets the
// calling thread's team size to computeThreads() (util/parallel.h) when it changed; inside another
// parallel region (per-head work) libgomp runs the call on that one thread.

#include "core/ops/gemm.h"
#include "core/util/error.h"
#include "core/util/parallel.h"

#include <dnnl.hpp>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

// libgomp, which Debian's libdnnl uses for its threads
extern "C" void omp_set_num_threads(int);
extern "C" int omp_get_max_threads(void);
extern "C" int omp_in_parallel(void);

namespace attnlens {
namespace onednn {

namespace {

dnnl::engine& cpuEngine() {
    static dnnl::engine engine = [] {
        // before oneDNN's first kernel: later calls cannot lower the ISA
        if (limitedToAvx2()) dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2);
        return dnnl::engine(dnnl::engine::kind::cpu, 0);
    }();
    return engine;
}

// Memory that grows to the largest size asked for, 4096-byte aligned (what oneDNN asks of buffers it is
// handed: its kernels may assume aligned scratchpad offsets).
class AlignedBuffer {
public:
    void* get(size_t bytes) {
        if (bytes > m_size) {
            const size_t rounded = (bytes + 4095) / 4096 * 4096;
            m_size = 0; // nothing held if the allocation fails
            m_data.reset(std::aligned_alloc(4096, rounded));
            if (!m_data)
                throw Error("out of memory for a oneDNN buffer of " + std::to_string(bytes) + " bytes");
            m_size = rounded;
        }
        return m_data.get();
    }
    // Gives a buffer above kKeptBytes back after a call (a full-resolution input rounded to bf16 reaches
    // 100 MB; the thread would hold it for its life).
    void trim() {
        if (m_size > kKeptBytes) {
            m_data.reset();
            m_size = 0;
        }
    }
    static constexpr size_t kKeptBytes = size_t{32} << 20;

private:
    std::unique_ptr<void, decltype(&std::free)> m_data{nullptr, &std::free};
    size_t m_size = 0;
};

// Per calling thread: its OpenMP team size, a stream, the scratchpad and the bf16 input.
struct ThreadState {
    ThreadState() : stream(cpuEngine()) {}
    // The team oneDNN runs this call on: computeThreads(). Inside one of our parallel regions (Winograd's 16
    // products) the call runs on that one thread whatever is set, and a setting made there would end with the
    // region: nothing to do.
    void useTeam() {
        const int wanted = computeThreads();
        if (!omp_in_parallel() && omp_get_max_threads() != wanted) omp_set_num_threads(wanted);
    }
    dnnl::stream stream;
    AlignedBuffer scratch;
    AlignedBuffer bf16Input; // the input rounded to bfloat16 (LinearPrecision::Bf16)
};
ThreadState& threadState() {
    thread_local ThreadState state;
    return state;
}

using Dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

dnnl::memory::desc rowsDesc(int64_t rows, int64_t cols, int64_t ld, dt type = dt::f32) {
    return {Dims{rows, cols}, type, Dims{ld, 1}};
}

dnnl::primitive_attr userScratchpad() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

// The primitive for n rows of input (row stride ldx; a dense bfloat16 copy for bf16 weights) into out
// (row stride ldo, float32).
dnnl::matmul::primitive_desc describe(const dnnl::memory::desc& weights, int64_t in, int64_t out, int64_t n,
                                      int64_t ldx, int64_t ldo) {
    const bool bf16 = weights.data_type() == dt::bf16;
    const auto src = bf16 ? rowsDesc(n, in, in, dt::bf16) : rowsDesc(n, in, ldx);
    const dnnl::matmul::desc desc(src, weights, rowsDesc(n, out, ldo));
    return dnnl::matmul::primitive_desc(desc, userScratchpad(), cpuEngine());
}

} // namespace

// Primitives per (rows, input row stride, output row stride), at most kShapes per weight (each picture size
// adds one or two; beyond kShapes the cache starts over). Entries are shared: a call keeps its own alive
// while another thread starts the cache over.
template <class T> class ShapeCache {
public:
    using Key = std::tuple<int64_t, int64_t, int64_t>;
    template <class Make> std::shared_ptr<const T> get(const Key& key, Make&& make) const {
        const std::lock_guard lock(m_mutex);
        if (auto it = m_entries.find(key); it != m_entries.end()) return it->second;
        if (m_entries.size() >= kShapes) m_entries.clear();
        auto prepared = std::make_shared<const T>(make());
        m_entries.emplace(key, prepared);
        return prepared;
    }

private:
    static constexpr size_t kShapes = 16;
    mutable std::mutex m_mutex;
    mutable std::map<Key, std::shared_ptr<const T>> m_entries;
};

// A matmul for one shape; rounded: the float32 operand is rounded to bfloat16 first (by `round`).
struct Prepared {
    dnnl::matmul::primitive_desc desc;
    dnnl::matmul primitive;
    dnnl::memory::desc input; // the caller's float32 operand
    bool rounded = false;
    dnnl::reorder round; // input -> the bf16 operand
};

} // namespace onednn

struct OnednnLinear {
    int64_t out = 0, in = 0;
    dnnl::memory
        weights; // [in, out] in the layout oneDNN chose (or a bf16 view: W [out, in] row-major, "ba")
    std::shared_ptr<const void> keep;                // a view's memory
    onednn::ShapeCache<onednn::Prepared> primitives; // the rows rounded to bf16 for bf16 weights
};

// C [m, n] = W · X with W [m, k] kept (oneDNN's "source" operand, row-major) in bfloat16 — then X [k, n] is
// rounded to bfloat16 per call (the matmul's "weights" operand, dense row-major) — or in float32 (X used
// where it is).
struct OnednnProduct {
    int64_t m = 0, k = 0;
    dnnl::memory left;                               // W, bf16 or f32 [m, k] row-major
    onednn::ShapeCache<onednn::Prepared> primitives; // X rounded to bf16 when W is bf16
};

namespace onednn {

bool available() {
    try {
        (void)cpuEngine();
        return true;
    } catch (const dnnl::error&) {
        return false;
    }
}

std::string effectiveIsa() {
    using isa = dnnl::cpu_isa;
    switch (dnnl::get_effective_cpu_isa()) {
    case isa::sse41:
        return "sse41";
    case isa::avx:
        return "avx";
    case isa::avx2:
        return "avx2";
    case isa::avx2_vnni:
        return "avx2_vnni";
    case isa::avx512_core:
        return "avx512_core";
    case isa::avx512_core_vnni:
        return "avx512_core_vnni";
    case isa::avx512_core_bf16:
        return "avx512_core_bf16";
    case isa::avx512_core_amx:
        return "avx512_core_amx";
    default:
        return "other";
    }
}

bool bf16Available() {
    try {
        const dnnl::memory::desc any(Dims{64, 64}, dt::bf16, dnnl::memory::format_tag::any);
        (void)describe(any, 64, 64, 16, 64, 64);
        return true;
    } catch (const dnnl::error&) {
        return false;
    }
}

namespace {
// One prepared matmul on this thread's stream and scratchpad, finished on return; a large bf16 copy is given
// back.
void runMatmul(ThreadState& state, const Prepared& prepared, const dnnl::memory& src,
               const dnnl::memory& weights, float* out) {
    const auto& pd = prepared.desc;
    dnnl::memory dst(pd.dst_desc(), cpuEngine(), out);
    dnnl::memory scratch(pd.scratchpad_desc(), cpuEngine(),
                         state.scratch.get(pd.scratchpad_desc().get_size()));
    prepared.primitive.execute(state.stream, {{DNNL_ARG_SRC, src},
                                              {DNNL_ARG_WEIGHTS, weights},
                                              {DNNL_ARG_DST, dst},
                                              {DNNL_ARG_SCRATCHPAD, scratch}});
    state.stream.wait();
    state.bf16Input.trim();
}

// `to` = `from` in to's layout and type, on this thread's stream, finished on return (packing at load).
void reorderNow(dnnl::memory from, dnnl::memory to) { // handles: copies share the data
    threadState().useTeam();
    auto& stream = threadState().stream;
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
}
} // namespace

std::shared_ptr<const OnednnLinear> packLinear(const float* w, int64_t outFeatures, int64_t inFeatures,
                                               bool bf16) {
    try {
        auto pack = std::make_shared<OnednnLinear>();
        pack->out = outFeatures;
        pack->in = inFeatures;
        // Weights as [in, out]: W [out, in] row-major is its transpose ("ba"). The layout is chosen
        // for a ViT-sized row count and serves every other row count (checked by the tests).
        const dnnl::memory::desc any(Dims{inFeatures, outFeatures}, bf16 ? dt::bf16 : dt::f32,
                                     dnnl::memory::format_tag::any);
        const auto pd = describe(any, inFeatures, outFeatures, 197, inFeatures, outFeatures);
        const dnnl::memory::desc plain(Dims{inFeatures, outFeatures}, dt::f32, dnnl::memory::format_tag::ba);
        dnnl::memory source(plain, cpuEngine(), const_cast<float*>(w));
        pack->weights = dnnl::memory(pd.weights_desc(), cpuEngine());
        reorderNow(source, pack->weights);
        return pack;
    } catch (const dnnl::error& e) {
        throw Error(std::string("oneDNN could not pack a linear weight: ") + e.what());
    }
}

std::shared_ptr<const OnednnLinear> viewLinearBf16(const uint16_t* w, int64_t outFeatures, int64_t inFeatures,
                                                   std::shared_ptr<const void> keep) {
    try {
        auto view = std::make_shared<OnednnLinear>();
        view->out = outFeatures;
        view->in = inFeatures;
        view->keep = std::move(keep);
        const dnnl::memory::desc plain(Dims{inFeatures, outFeatures}, dt::bf16, dnnl::memory::format_tag::ba);
        // a prompt-sized primitive now, so that a layout oneDNN cannot run fast (its reference kernel) is
        // refused at load, where the caller keeps the exact path, not in the middle of a run
        const auto pd = describe(plain, inFeatures, outFeatures, 197, inFeatures, outFeatures);
        if (pd.weights_desc() != plain || std::string(pd.impl_info_str()).find("ref") != std::string::npos)
            throw Error(std::string("oneDNN has no fast kernel for a bf16 weight as stored (") +
                        pd.impl_info_str() + ")");
        view->weights = dnnl::memory(plain, cpuEngine(), const_cast<uint16_t*>(w));
        return view;
    } catch (const dnnl::error& e) {
        throw Error(std::string("oneDNN could not use a bf16 linear weight: ") + e.what());
    }
}

std::shared_ptr<const OnednnProduct> packProduct(const float* w, int64_t m, int64_t k, bool bf16) {
    try {
        auto pack = std::make_shared<OnednnProduct>();
        pack->m = m;
        pack->k = k;
        dnnl::memory source(rowsDesc(m, k, k), cpuEngine(), const_cast<float*>(w));
        pack->left = dnnl::memory(rowsDesc(m, k, k, bf16 ? dt::bf16 : dt::f32), cpuEngine());
        reorderNow(source, pack->left);
        return pack;
    } catch (const dnnl::error& e) {
        throw Error(std::string("oneDNN could not prepare a convolution weight: ") + e.what());
    }
}

void product(const OnednnProduct& pack, const float* x, int64_t ldx, int64_t n, float* c, int64_t ldc) {
    try {
        ThreadState& state = threadState();
        state.useTeam();
        const auto prepared = pack.primitives.get({n, ldx, ldc}, [&] {
            // bf16: X rounded into a dense bf16 copy; float32: X used where it is (its row stride)
            const bool bf16 = pack.left.get_desc().data_type() == dt::bf16;
            const auto input = rowsDesc(pack.k, n, ldx);
            const dnnl::matmul::desc desc(pack.left.get_desc(),
                                          bf16 ? rowsDesc(pack.k, n, n, dt::bf16) : input,
                                          rowsDesc(pack.m, n, ldc));
            Prepared p{
                dnnl::matmul::primitive_desc(desc, userScratchpad(), cpuEngine()), {}, input, bf16, {}};
            p.primitive = dnnl::matmul(p.desc);
            if (bf16)
                p.round = dnnl::reorder(
                    dnnl::reorder::primitive_desc(cpuEngine(), input, cpuEngine(), p.desc.weights_desc()));
            return p;
        });
        const auto& pd = prepared->desc;
        dnnl::memory right(prepared->input, cpuEngine(), const_cast<float*>(x));
        if (prepared->rounded) {
            dnnl::memory rounded(pd.weights_desc(), cpuEngine(),
                                 state.bf16Input.get(pd.weights_desc().get_size()));
            prepared->round.execute(state.stream, right, rounded);
            right = rounded;
        }
        runMatmul(state, *prepared, pack.left, right, c);
    } catch (const dnnl::error& e) {
        throw Error(std::string("oneDNN matmul failed: ") + e.what());
    }
}

void sgemm(const GemmArgs& a) {
    threadState().useTeam();
    const dnnl_status_t status = dnnl_sgemm('N', a.transB ? 'T' : 'N', a.m, a.n, a.k, 1.0f, a.a, a.lda, a.b,
                                            a.ldb, a.accumulate ? 1.0f : 0.0f, a.c, a.ldc);
    if (status != dnnl_success)
        throw Error("oneDNN's sgemm failed (status " + std::to_string(int(status)) + ")");
}

void linear(const OnednnLinear& pack, const float* x, int64_t ldx, int64_t n, float* out, int64_t ldo) {
    try {
        ThreadState& state = threadState();
        state.useTeam();
        const auto prepared = pack.primitives.get({n, ldx, ldo}, [&] {
            auto pd = describe(pack.weights.get_desc(), pack.in, pack.out, n, ldx, ldo);
            if (pd.weights_desc() != pack.weights.get_desc())
                throw Error("oneDNN chose another weight layout for " + std::to_string(n) + " rows");
            Prepared p{pd, dnnl::matmul(pd), rowsDesc(n, pack.in, ldx), false, {}};
            if (pd.src_desc() != p.input) { // bf16 weights: the rows rounded to bfloat16 first
                p.rounded = true;
                p.round = dnnl::reorder(
                    dnnl::reorder::primitive_desc(cpuEngine(), p.input, cpuEngine(), pd.src_desc()));
            }
            return p;
        });
        const auto& pd = prepared->desc;
        dnnl::memory src(prepared->input, cpuEngine(), const_cast<float*>(x));
        if (prepared->rounded) {
            dnnl::memory rounded(pd.src_desc(), cpuEngine(), state.bf16Input.get(pd.src_desc().get_size()));
            prepared->round.execute(state.stream, src, rounded);
            src = rounded;
        }
        runMatmul(state, *prepared, src, pack.weights, out);
    } catch (const dnnl::error& e) {
        throw Error(std::string("oneDNN matmul failed: ") + e.what());
    }
}

} // namespace onednn
} // namespace attnlens
