// libFuzzer target: a user's model.safetensors (header, tensor table, data offsets) — opened as the models
// open it and every tensor loaded as float32. Any input must end in a loaded file or attnlens::Error.
#include "core/io/safetensors.h"
#include "core/util/error.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::TempFile file(data, size, "model.safetensors");
    try {
        const auto st = attnlens::TensorFile::open(file.path());
        for (const auto& info : st.tensors())
            if (attnlens::shapeNumel(info.shape) <= (int64_t{1} << 22)) (void)st.load(info);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
