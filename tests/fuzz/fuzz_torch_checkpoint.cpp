// libFuzzer target: a user's pytorch_model.bin (zip or legacy torch.save format: the zip directory, the
// restricted pickle reader, storages, offsets and strides) — opened as the models open it and every float
// tensor loaded. Any input must end in a loaded file or attnlens::Error.
#include "core/io/tensor_file.h"
#include "core/util/error.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::TempFile file(data, size, "pytorch_model.bin");
    try {
        const auto checkpoint = attnlens::TensorFile::open(file.path());
        for (const auto& info : checkpoint.tensors())
            if (attnlens::isFloatWeightType(info.dtype) &&
                attnlens::shapeNumel(info.shape) <= (int64_t{1} << 22))
                (void)checkpoint.load(info);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
