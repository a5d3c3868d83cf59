#pragma once
// Image preprocessing with the semantics of Hugging Face's ViTImageProcessor (transformers v4.33),
// including its use of PIL for the resize:
//   1. channel conversion (ours, see below),
//   2. resize to exactly height × width with PIL's Image.resize (a separable, antialiased filter whose
//      support widens when shrinking; 8-bit fixed-point coefficients; the horizontal pass is rounded to
//      uint8 before the vertical pass; a same-size resize is an exact copy),
//   3. rescale: float32(v · rescale_factor) with the product taken in double,
//   4. normalise: (x − mean) / std in float32, per channel,
//   5. channels-first [C, H, W].
// DeiT checkpoints (feature_extractor_type / image_processor_type "DeiT…") use DeiTImageProcessor:
// the same steps with different defaults (256×256, bicubic, ImageNet mean/std) and a centre crop
// between 2 and 3 (transformers' center_crop: top = ⌊(H − h)/2⌋, left = ⌊(W − w)/2⌋, zero-padded where
// the crop is larger than the image). ViTImageProcessor ignores crop settings, and so do we for it.
// BitImageProcessor (DINOv2) and CLIPImageProcessor resize the SHORTEST edge to size["shortest_edge"]
// (the long edge to ⌊se · long / short⌋, as get_resize_output_image_size computes it), then centre-crop;
// their defaults: shortest edge 224, crop 224×224, bicubic, OpenAI CLIP's mean/std, and an int "size" means
// the shortest edge.
// Step 1 is not in the HF processor (it passes whatever the caller loaded): we load RGB and, for a
// model with num_channels == 1, convert to grey exactly as PIL's convert("L") before resizing — what a
// caller doing Image.open(p).convert("L") would feed it. A grey file for a 3-channel model is
// replicated to RGB (PIL's convert("RGB")).
//
// Basic usage:
//   auto config = ImageProcessorConfig::load(modelDir);          // defaults when the file is absent
//   PreprocessedImage in = preprocessImage(loadImage(path), config, /*channels=*/3);
//   in.pixels  // [3, 224, 224] float32

#include "core/io/json_file.h"
#include "core/tensor/tensor.h"
#include "core/vision/image_io.h"

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace attnlens {

// PIL's resampling filters, numbered as PIL.Image.Resampling (the value stored in "resample").
enum class ResampleFilter { Nearest = 0, Lanczos = 1, Bilinear = 2, Bicubic = 3, Box = 4, Hamming = 5 };
std::string_view resampleFilterName(ResampleFilter filter);

struct ImageProcessorConfig {
    bool doResize = true;
    int height = 224;
    int width = 224;
    int shortestEdge =
        0; // > 0: resize the shortest edge to this (Bit / CLIP processors) instead of height × width
    ResampleFilter resample = ResampleFilter::Bilinear;
    bool doRescale = true;
    double rescaleFactor = 1.0 / 255.0;
    bool doNormalize = true;
    std::vector<float> imageMean{0.5f, 0.5f, 0.5f};
    std::vector<float> imageStd{0.5f, 0.5f, 0.5f};
    // DeiTImageProcessor, BitImageProcessor, CLIPImageProcessor: centre crop after the resize.
    bool doCenterCrop = false;
    int cropHeight = 224;
    int cropWidth = 224;
    std::string processorType = "ViTImageProcessor";

    // Reads preprocessor_config.json. "size" and "crop_size" may be {"height","width"} or an int
    // (square, as old feature extractors wrote it). A DeiT processor type switches to DeiT's defaults
    // and honours do_center_crop / crop_size; for any other type crop settings are ignored, as
    // ViTImageProcessor ignores them. Throws attnlens::Error for malformed values.
    static ImageProcessorConfig fromJson(const JsonConfig& json);
    // <modelDir>/preprocessor_config.json, or the defaults above when the file does not exist.
    static ImageProcessorConfig load(const std::filesystem::path& modelDir);
};

// PIL Image.resize(size, filter) on an 8-bit image (1 or 3 channels), bit-exact with Pillow's
// ImagingResample for the filters Lanczos, Bilinear, Bicubic, Box and Hamming. Nearest is not
// supported (throws). Same size → copy.
ImageU8 resizePil(const ImageU8& image, int width, int height,
                  ResampleFilter filter = ResampleFilter::Bilinear);

struct PreprocessedImage {
    Tensor pixels;      // [C, H, W] float32 model input
    ImageU8 resized;    // the 8-bit image after channel conversion, resize and crop (what the model sees)
    int imageWidth = 0; // the original image (before resize), for patch geometry
    int imageHeight = 0;
    // The model input's extent in original-image pixels: the whole image, or the centre-cropped part
    // (it reaches outside the image where the crop was zero-padded).
    double regionX = 0, regionY = 0, regionWidth = 0, regionHeight = 0;
};

// transformers' center_crop on an 8-bit image: the (width × height) window whose top-left corner is
// (⌊(W − width)/2⌋, ⌊(H − height)/2⌋); pixels outside the image are 0.
ImageU8 centerCrop(const ImageU8& image, int width, int height);

// Runs steps 1–5 for a model with `channels` input channels (1 or 3). Throws attnlens::Error when the
// mean/std lengths do not fit the channel count or the image is empty.
PreprocessedImage preprocessImage(const ImageU8& image, const ImageProcessorConfig& config, int channels);

} // namespace attnlens
