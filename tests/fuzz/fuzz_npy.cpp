// libFuzzer target: a user's .npy sample (the U-Net's --sample): header dict, dtype, shape, data length.
#include "core/io/npy_reader.h"
#include "core/util/error.h"
#include "fuzz_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const fuzz::TempFile file(data, size, "sample.npy");
    try {
        (void)attnlens::readNpy(file.path(), int64_t{1} << 22);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
