// libFuzzer target: a user's model.safetensors (header, tensor table, data offsets) — opened as the models
// open it and every tensor loaded as float32 — and each F16 / BF16 one as stored (loadHalf, read through the
// widening every 16-bit weight goes through). Any input must end in a loaded file or attnlens::Error.
#include "core/io/safetensors.h"
#include "core/util/error.h"
#include "fuzz_file.h"

#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::TempFile file(data, size, "model.safetensors");
    try {
        const auto st = attnlens::TensorFile::open(file.path());
        for (const auto& info : st.tensors())
            if (attnlens::shapeNumel(info.shape) <= (int64_t{1} << 22)) {
                (void)st.load(info);
                if ((info.dtype == attnlens::DType::F16 || info.dtype == attnlens::DType::BF16) &&
                    !info.shape.empty()) {
                    const attnlens::HalfMatrix m = st.loadHalf(info);
                    std::vector<float> row(static_cast<size_t>(m.cols()));
                    for (int64_t r = 0; r < m.rows(); ++r)
                        m.rowsToFloat(r, 1, row.data());
                }
            }
    } catch (const attnlens::Error&) {
    }
    return 0;
}
