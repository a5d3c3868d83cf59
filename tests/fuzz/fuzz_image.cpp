// libFuzzer target: a user's picture through our decode path (format sniffing, OpenCV's decoders, the
// size limits), then converted to RGB. Bad input: attnlens::Error only.
#include "core/util/error.h"
#include "core/vision/image_io.h"

#include <opencv2/core.hpp>

#include <span>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    // OpenCV's worker threads would add their coverage (and allocations) to whichever input runs while they
    // do: a run would no longer be repeatable from its seed. Decode on the calling thread only.
    cv::setNumThreads(0);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        attnlens::LoadOptions options;
        options.maxPixels = 4'000'000; // the product's limit is 100 MP; smaller keeps executions fast
        const attnlens::ImageU8 image =
            attnlens::decodeImage(std::span<const uint8_t>(data, size), "fuzz", options);
        (void)attnlens::toRgb(image);
    } catch (const attnlens::Error&) {
    }
    return 0;
}
