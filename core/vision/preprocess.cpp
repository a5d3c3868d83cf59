#include "core/vision/preprocess.h"

#include "core/util/error.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace attnlens {

std::string_view resampleFilterName(ResampleFilter filter) {
    switch (filter) {
    case ResampleFilter::Nearest:
        return "nearest";
    case ResampleFilter::Lanczos:
        return "lanczos";
    case ResampleFilter::Bilinear:
        return "bilinear";
    case ResampleFilter::Bicubic:
        return "bicubic";
    case ResampleFilter::Box:
        return "box";
    case ResampleFilter::Hamming:
        return "hamming";
    }
    return "?";
}

namespace {

// --- PIL's resampling (re-implemented from the algorithm Pillow documents in Resample.c) -------------
// Each output sample is a normalised filter-weighted sum of input samples; when shrinking, the filter is
// stretched by the scale factor (antialiasing). Weights are quantised to 22-bit fixed point
// (32 − 8 − 2 bits), the sum starts at half a unit and is clipped to [0, 255] after the shift.
constexpr int kPrecisionBits = 32 - 8 - 2;

double sinc(double x) {
    if (x == 0.0) return 1.0;
    x *= std::numbers::pi;
    return std::sin(x) / x;
}

struct Filter {
    double (*fn)(double);
    double support;
};

double boxFilter(double x) {
    return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0;
}
double bilinearFilter(double x) {
    x = std::abs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}
double hammingFilter(double x) {
    x = std::abs(x);
    if (x == 0.0) return 1.0;
    if (x >= 1.0) return 0.0;
    x *= std::numbers::pi;
    return std::sin(x) / x * (0.54 + 0.46 * std::cos(x));
}
double bicubicFilter(double x) {
    constexpr double a = -0.5;
    x = std::abs(x);
    if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
    if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
    return 0.0;
}
double lanczosFilter(double x) {
    return (x >= -3.0 && x < 3.0) ? sinc(x) * sinc(x / 3.0) : 0.0;
}

Filter filterFor(ResampleFilter f) {
    switch (f) {
    case ResampleFilter::Box:
        return {boxFilter, 0.5};
    case ResampleFilter::Bilinear:
        return {bilinearFilter, 1.0};
    case ResampleFilter::Hamming:
        return {hammingFilter, 1.0};
    case ResampleFilter::Bicubic:
        return {bicubicFilter, 2.0};
    case ResampleFilter::Lanczos:
        return {lanczosFilter, 3.0};
    case ResampleFilter::Nearest:
        break;
    }
    throw Error(
        "image resize: resample filter 'nearest' (0) is not supported; use bilinear (2) or bicubic (3)");
}

struct Coefficients {
    int ksize = 0;
    std::vector<int> first; // first input index per output index
    std::vector<int> count; // number of taps per output index
    std::vector<int32_t> k; // [out, ksize] fixed-point weights
};

Coefficients computeCoefficients(int inSize, int outSize, const Filter& filter) {
    const double scale = double(inSize) / outSize;
    const double filterScale = std::max(scale, 1.0);
    const double support = filter.support * filterScale;
    Coefficients c;
    c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
    c.first.resize(outSize);
    c.count.resize(outSize);
    c.k.assign(static_cast<size_t>(outSize) * c.ksize, 0);
    std::vector<double> w(c.ksize);
    for (int xx = 0; xx < outSize; ++xx) {
        const double center = (xx + 0.5) * scale;
        // (int) truncates toward zero, as the C code does; the clamps follow.
        int xmin = static_cast<int>(center - support + 0.5);
        if (xmin < 0) xmin = 0;
        int xmax = static_cast<int>(center + support + 0.5);
        if (xmax > inSize) xmax = inSize;
        xmax -= xmin;
        double total = 0.0;
        for (int x = 0; x < xmax; ++x) {
            w[x] = filter.fn((x + xmin - center + 0.5) / filterScale);
            total += w[x];
        }
        for (int x = 0; x < xmax; ++x) {
            const double v = total != 0.0 ? w[x] / total : w[x];
            const double fixed = v * (1 << kPrecisionBits);
            c.k[static_cast<size_t>(xx) * c.ksize + x] =
                static_cast<int32_t>(v < 0 ? fixed - 0.5 : fixed + 0.5);
        }
        c.first[xx] = xmin;
        c.count[xx] = xmax;
    }
    return c;
}

inline uint8_t clip8(int32_t v) {
    if (v >= (1 << kPrecisionBits << 8)) return 255;
    if (v <= 0) return 0;
    return static_cast<uint8_t>(v >> kPrecisionBits);
}

ImageU8 resampleHorizontal(const ImageU8& in, int outWidth, const Coefficients& c) {
    ImageU8 out(outWidth, in.height, in.channels);
    const int cn = in.channels;
    for (int y = 0; y < in.height; ++y) {
        const uint8_t* row = &in.pixels[static_cast<size_t>(y) * in.width * cn];
        uint8_t* dst = &out.pixels[static_cast<size_t>(y) * outWidth * cn];
        for (int xx = 0; xx < outWidth; ++xx) {
            const int32_t* k = &c.k[static_cast<size_t>(xx) * c.ksize];
            const uint8_t* src = row + static_cast<size_t>(c.first[xx]) * cn;
            for (int ch = 0; ch < cn; ++ch) {
                int32_t ss = 1 << (kPrecisionBits - 1);
                for (int x = 0; x < c.count[xx]; ++x)
                    ss += src[x * cn + ch] * k[x];
                dst[xx * cn + ch] = clip8(ss);
            }
        }
    }
    return out;
}

ImageU8 resampleVertical(const ImageU8& in, int outHeight, const Coefficients& c) {
    ImageU8 out(in.width, outHeight, in.channels);
    const size_t stride = static_cast<size_t>(in.width) * in.channels;
    for (int yy = 0; yy < outHeight; ++yy) {
        const int32_t* k = &c.k[static_cast<size_t>(yy) * c.ksize];
        uint8_t* dst = &out.pixels[yy * stride];
        for (size_t i = 0; i < stride; ++i) {
            int32_t ss = 1 << (kPrecisionBits - 1);
            for (int y = 0; y < c.count[yy]; ++y)
                ss += in.pixels[(c.first[yy] + y) * stride + i] * k[y];
            dst[i] = clip8(ss);
        }
    }
    return out;
}

std::vector<float> floatList(const JsonConfig& json, const std::string& key, std::vector<float> fallback) {
    if (!json.has(key)) return fallback;
    const Json& v = json.json()[key];
    if (v.is_number()) return {v.get<float>()};
    if (!v.is_array() || v.empty())
        throw Error(json.path().string() + ": '" + key + "' must be a number or a non-empty list of numbers");
    std::vector<float> out;
    for (const auto& e : v) {
        if (!e.is_number()) throw Error(json.path().string() + ": '" + key + "' must contain numbers only");
        out.push_back(e.get<float>());
    }
    return out;
}

// The per-channel value of a mean/std list for a model with `channels` channels: a single value is
// broadcast; a 3-entry list for a 1-channel model is accepted only if its entries agree.
std::vector<float> perChannel(const std::vector<float>& values, int channels, const char* what) {
    if (static_cast<int>(values.size()) == channels) return values;
    if (values.size() == 1) return std::vector<float>(channels, values[0]);
    if (channels == 1 && std::all_of(values.begin(), values.end(), [&](float v) { return v == values[0]; }))
        return {values[0]};
    throw Error(std::string("preprocessing: ") + what + " has " + std::to_string(values.size()) +
                " entries but the model takes " + std::to_string(channels) + " channel(s)");
}

} // namespace

namespace {
// Python's v // 2 (the crop offsets are negative where the crop is larger than the image).
int floorHalf(int v) {
    return v >= 0 ? v / 2 : -((-v + 1) / 2);
}

// "size" / "crop_size": an int (square; the shortest edge where `shortestEdge` is given) or
// {"height": H, "width": W}, or {"shortest_edge": N} where `shortestEdge` is given, each in [1, 16384].
void readSize(const JsonConfig& json, const std::string& key, int& height, int& width,
              int* shortestEdge = nullptr) {
    const std::string file = json.path().string();
    if (json.has(key)) {
        const Json& size = json.json()[key];
        if (shortestEdge &&
            (size.is_number_integer() || (size.is_object() && size.contains("shortest_edge")))) {
            const Json& edge = size.is_object() ? size["shortest_edge"] : size;
            if (!edge.is_number_integer() || edge.get<int64_t>() < 1 || edge.get<int64_t>() > 16384)
                throw Error(file + ": '" + key + "' shortest_edge must be an integer in 1..16384 (found " +
                            size.dump() + ")");
            *shortestEdge = edge.get<int>();
            return;
        }
        if (size.is_number_integer()) {
            height = width = size.get<int>();
        } else if (size.is_object() && size.contains("height") && size.contains("width") &&
                   size["height"].is_number_integer() && size["width"].is_number_integer()) {
            height = size["height"].get<int>();
            width = size["width"].get<int>();
        } else {
            throw Error(file + ": '" + key + "' must be an integer, {\"height\": H, \"width\": W}" +
                        (shortestEdge ? " or {\"shortest_edge\": N}" : "") + " (found " + size.dump() + ")");
        }
    }
    if (height < 1 || width < 1 || height > 16384 || width > 16384)
        throw Error(file + ": '" + key + "' " + std::to_string(height) + "×" + std::to_string(width) +
                    " is out of range");
}
} // namespace

ImageProcessorConfig ImageProcessorConfig::fromJson(const JsonConfig& json) {
    ImageProcessorConfig c;
    const std::string file = json.path().string();
    // transformers picks the processor class from image_processor_type (or, in older files,
    // feature_extractor_type); DeiT's has other defaults and a centre crop.
    if (json.has("image_processor_type"))
        c.processorType = json.get<std::string>("image_processor_type");
    else if (json.has("feature_extractor_type"))
        c.processorType = json.get<std::string>("feature_extractor_type");
    const bool deit = c.processorType.rfind("DeiT", 0) == 0;
    // BitImageProcessorFast resizes with torchvision, not PIL: read as the slow class (close, not exact).
    const bool shortest = c.processorType.rfind("BitImageProcessor", 0) == 0 ||
                          c.processorType.rfind("CLIPImageProcessor", 0) == 0;
    if (deit) {
        c.height = c.width = 256;
        c.imageMean = {0.485f, 0.456f, 0.406f}; // IMAGENET_DEFAULT_MEAN / STD
        c.imageStd = {0.229f, 0.224f, 0.225f};
    }
    if (shortest) {
        c.shortestEdge = 224;
        c.imageMean = {0.48145466f, 0.4578275f, 0.40821073f}; // OPENAI_CLIP_MEAN / STD
        c.imageStd = {0.26862954f, 0.26130258f, 0.27577711f};
    }
    if (c.processorType.rfind("SiglipImageProcessor", 0) == 0)
        c.resample = ResampleFilter::Bicubic; // else as ViT's: size 224×224, mean = std = 0.5, no crop
    if (deit || shortest) {
        c.resample = ResampleFilter::Bicubic;
        c.doCenterCrop = json.value<bool>("do_center_crop", true);
        readSize(json, "crop_size", c.cropHeight, c.cropWidth);
    }
    c.doResize = json.value<bool>("do_resize", c.doResize);
    readSize(json, "size", c.height, c.width, shortest ? &c.shortestEdge : nullptr);
    const int resample = json.value<int>("resample", static_cast<int>(c.resample));
    if (resample < 0 || resample > 5)
        throw Error(file + ": 'resample' " + std::to_string(resample) + " is not a PIL filter");
    c.resample = static_cast<ResampleFilter>(resample);
    c.doRescale = json.value<bool>("do_rescale", c.doRescale);
    c.rescaleFactor = json.value<double>("rescale_factor", c.rescaleFactor);
    c.doNormalize = json.value<bool>("do_normalize", c.doNormalize);
    c.imageMean = floatList(json, "image_mean", c.imageMean);
    c.imageStd = floatList(json, "image_std", c.imageStd);
    for (float s : c.imageStd)
        if (s == 0.0f) throw Error(file + ": 'image_std' contains 0");
    return c;
}

ImageProcessorConfig ImageProcessorConfig::load(const std::filesystem::path& modelDir) {
    const auto path = modelDir / "preprocessor_config.json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return {};
    return fromJson(JsonConfig(path));
}

ImageU8 resizePil(const ImageU8& image, int width, int height, ResampleFilter filter) {
    if (image.empty()) throw Error("image resize: the image is empty");
    if (width < 1 || height < 1) throw Error("image resize: target size must be positive");
    if (width == image.width && height == image.height) return image;
    const Filter f = filterFor(filter);
    // Horizontal pass first (rounded to uint8), then vertical, each only when that size changes.
    ImageU8 out = image;
    if (width != image.width)
        out = resampleHorizontal(out, width, computeCoefficients(image.width, width, f));
    if (height != image.height)
        out = resampleVertical(out, height, computeCoefficients(image.height, height, f));
    return out;
}

ImageU8 centerCrop(const ImageU8& image, int width, int height) {
    if (width < 1 || height < 1) throw Error("centre crop: size must be positive");
    const int top = floorHalf(image.height - height);
    const int left = floorHalf(image.width - width);
    ImageU8 out(width, height, image.channels);
    for (int y = 0; y < height; ++y) {
        const int sy = top + y;
        if (sy < 0 || sy >= image.height) continue;
        for (int x = 0; x < width; ++x) {
            const int sx = left + x;
            if (sx < 0 || sx >= image.width) continue;
            for (int ch = 0; ch < image.channels; ++ch)
                out.at(x, y, ch) = image.at(sx, sy, ch);
        }
    }
    return out;
}

PreprocessedImage preprocessImage(const ImageU8& image, const ImageProcessorConfig& config, int channels) {
    if (image.empty()) throw Error("preprocessing: the image is empty");
    if (channels != 1 && channels != 3)
        throw Error("preprocessing: models with " + std::to_string(channels) +
                    " input channels are not supported "
                    "(expected 1 or 3)");
    PreprocessedImage result;
    result.imageWidth = image.width;
    result.imageHeight = image.height;
    ImageU8 converted = channels == 1 ? toGrey(image) : toRgb(image);
    int width = config.width, height = config.height;
    if (config.shortestEdge > 0) { // get_resize_output_image_size(default_to_square=False)
        const int se = config.shortestEdge;
        const int shortSide = std::min(image.width, image.height),
                  longSide = std::max(image.width, image.height);
        const int newLong = static_cast<int>(double(se) * longSide / shortSide);
        width = image.width <= image.height ? se : newLong;
        height = image.width <= image.height ? newLong : se;
    }
    result.resized =
        config.doResize ? resizePil(converted, width, height, config.resample) : std::move(converted);
    result.regionWidth = image.width;
    result.regionHeight = image.height;
    if (config.doCenterCrop) {
        // The crop window in resized pixels, mapped back to the original image.
        const double sx = double(image.width) / result.resized.width;
        const double sy = double(image.height) / result.resized.height;
        result.regionX = floorHalf(result.resized.width - config.cropWidth) * sx;
        result.regionY = floorHalf(result.resized.height - config.cropHeight) * sy;
        result.regionWidth = config.cropWidth * sx;
        result.regionHeight = config.cropHeight * sy;
        result.resized = centerCrop(result.resized, config.cropWidth, config.cropHeight);
    }
    const auto mean = perChannel(config.imageMean, channels, "image_mean");
    const auto stdev = perChannel(config.imageStd, channels, "image_std");
    const int h = result.resized.height;
    const int w = result.resized.width;
    result.pixels = Tensor({channels, h, w});
    float* out = result.pixels.data(); // [C, H, W]
    for (int c = 0; c < channels; ++c) {
        for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) {
                const uint8_t v = result.resized.at(x, y, c);
                float value =
                    config.doRescale ? static_cast<float>(v * config.rescaleFactor) : static_cast<float>(v);
                if (config.doNormalize) value = (value - mean[c]) / stdev[c];
                out[(static_cast<size_t>(c) * h + y) * w + x] = value;
            }
        }
    }
    return result;
}

} // namespace attnlens
