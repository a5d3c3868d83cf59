// attnlens-cli vision-eval: accuracy and speed of a ViT classifier over many images, measured by the C++
// engine itself (this is how the built-in model's test accuracy is reported).
//
// Inputs (one of):
//   --list LIST.tsv     one image per line: "PATH<TAB>LABEL" (LABEL = class index or id2label name) or
//                       just "PATH" (timed, not scored); relative paths are relative to the list's folder;
//                       blank lines and lines starting with '#' are skipped
//   --idx-images F --idx-labels F   (Fashion-)MNIST IDX files, .gz or plain, e.g.
//                       /usr/share/datasets/fashion-mnist/t10k-{images-idx3,labels-idx1}-ubyte.gz
// stdout: "images N", "labelled M", "correct K", "accuracy K/M", "ms_per_image T" (tab-separated;
// T = mean wall time of decode + preprocess + forward on this thread), "forward_ms_median F".
// --capture captures every head's attention as a normal run does (for timing); --json OUT adds per-class
// counts and the confusion matrix.

#include "cli_common.h"
#include "cli_image.h"
#include "core/io/idx_file.h"
#include "core/io/json_file.h"
#include "core/io/model_folder.h"
#include "core/models/vit_model.h"
#include "core/util/error.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>

namespace {

using namespace attnlens;
using Clock = std::chrono::steady_clock;

struct Item {
    std::string path; // empty for IDX items
    size_t idxIndex = 0;
    int label = -1; // -1: unlabelled
};

int parseLabel(const VitModel& model, const std::string& text, const std::string& where) {
    int v = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && ptr == text.data() + text.size()) {
        if (v < 0 || v >= model.numLabels())
            throw Error(where + ": label " + text + " is out of range (the model has " +
                        std::to_string(model.numLabels()) + " classes)");
        return v;
    }
    for (int i = 0; i < model.numLabels(); ++i)
        if (model.label(i) == text) return i;
    throw Error(where + ": unknown label '" + text + "'");
}

std::vector<Item> readList(const VitModel& model, const std::filesystem::path& list) {
    std::ifstream in(list);
    if (!in) throw Error("'" + list.string() + "': cannot open list");
    std::vector<Item> items;
    std::string line;
    for (int lineNo = 1; std::getline(in, line); ++lineNo) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        Item item;
        const auto tab = line.find('\t');
        std::filesystem::path p = line.substr(0, tab);
        if (p.is_relative()) p = list.parent_path() / p;
        item.path = p.string();
        if (tab != std::string::npos)
            item.label =
                parseLabel(model, line.substr(tab + 1), list.string() + ":" + std::to_string(lineNo));
        items.push_back(std::move(item));
    }
    return items;
}

// An IDX pair (images [N, rows, cols], labels [N]): one item per image, the images kept in `images`.
std::vector<Item> readIdxItems(const VitModel& model, const std::string& imagesPath,
                               const std::string& labelsPath, IdxArray& images) {
    images = readIdxFile(imagesPath);
    const IdxArray labels = readIdxFile(labelsPath);
    if (images.dims.size() != 3 || labels.dims.size() != 1 || labels.dims[0] != images.dims[0])
        throw Error("IDX files do not match: expected images [N, rows, cols] and labels [N]");
    std::vector<Item> items;
    for (size_t i = 0; i < labels.data.size(); ++i) {
        if (labels.data[i] >= model.numLabels())
            throw Error("'" + labelsPath + "': label " + std::to_string(labels.data[i]) + " at " +
                        std::to_string(i) + " is out of range for the model");
        items.push_back({"", i, labels.data[i]});
    }
    return items;
}

int runVisionEval(const std::vector<std::string>& argv) {
    const cli::Args args(argv, {"--model", "--list", "--idx-images", "--idx-labels", "--limit", "--json"},
                         {"--capture", "--interpolate-pos"});
    if (!args.positionals().empty())
        throw cli::UsageError("unexpected argument '" + args.positionals()[0] + "'");
    const bool useList = args.has("--list");
    const bool useIdx = args.has("--idx-images") || args.has("--idx-labels");
    if (useList == useIdx)
        throw cli::UsageError("give either --list LIST.tsv or --idx-images F --idx-labels F");
    if (useIdx && !(args.has("--idx-images") && args.has("--idx-labels")))
        throw cli::UsageError("--idx-images and --idx-labels go together");
    const int limit = args.intValue("--limit", 0, 0, 100'000'000);
    const std::filesystem::path modelDir = cli::modelDir(args, attnlens::ModelKind::Vit);
    const auto loaded = VitModel::load(modelDir);
    const attnlens::VitModel& model = *loaded;

    std::vector<Item> items;
    IdxArray idxImages;
    if (useList)
        items = readList(model, *args.value("--list"));
    else
        items = readIdxItems(model, *args.value("--idx-images"), *args.value("--idx-labels"), idxImages);
    if (limit > 0 && static_cast<size_t>(limit) < items.size()) items.resize(static_cast<size_t>(limit));
    if (items.empty()) throw Error("no images to evaluate");
    if (!model.hasClassifier()) throw Error("'" + modelDir.string() + "': the checkpoint has no classifier");

    VitRunOptions options;
    options.captureAttention = args.has("--capture");
    options.interpolatePositions = args.has("--interpolate-pos");
    const int classes = model.numLabels();
    std::vector<std::vector<int>> confusion(classes, std::vector<int>(classes, 0));
    int labelled = 0, correct = 0;
    double totalMs = 0;
    std::vector<double> forwardMs;
    for (const Item& item : items) {
        const auto t0 = Clock::now();
        const ImageU8 image =
            item.path.empty() ? idxImage(idxImages, item.idxIndex) : cli::loadImageQuietly(item.path);
        const PreprocessedImage input = preprocessImage(image, model.processor(), model.config().numChannels);
        const auto t1 = Clock::now();
        const VitOutput out = model.forward(input.pixels, options);
        const auto t2 = Clock::now();
        totalMs += std::chrono::duration<double, std::milli>(t2 - t0).count();
        forwardMs.push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
        if (item.label < 0) continue;
        const int predicted = model.topK(out, 1).front().index;
        ++labelled;
        correct += predicted == item.label;
        ++confusion[item.label][predicted];
    }
    std::sort(forwardMs.begin(), forwardMs.end());
    const double median = forwardMs[forwardMs.size() / 2];
    const double accuracy = labelled ? double(correct) / labelled : 0.0;
    std::printf("images\t%zu\nlabelled\t%d\ncorrect\t%d\naccuracy\t%.4f\nms_per_image\t%.3f\nforward_ms_"
                "median\t%.3f\n",
                items.size(), labelled, correct, accuracy, totalMs / items.size(), median);
    if (const auto jsonPath = args.value("--json")) {
        Json perClass = Json::array();
        for (int c = 0; c < classes; ++c) {
            int count = 0;
            for (int v : confusion[c])
                count += v;
            perClass.push_back(
                {{"index", c}, {"label", model.label(c)}, {"count", count}, {"correct", confusion[c][c]}});
        }
        writeJsonFile(*jsonPath,
                      {{"model", modelDir.string()},
                       {"images", items.size()},
                       {"labelled", labelled},
                       {"correct", correct},
                       {"accuracy", accuracy},
                       {"ms_per_image", totalMs / items.size()},
                       {"forward_ms_median", median},
                       {"capture_attention", options.captureAttention},
                       {"per_class", perClass},
                       {"confusion", confusion}},
                      1);
    }
    return 0;
}

const cli::Registration regVisionEval{
    "vision-eval",
    "[--model DIR] (--list LIST.tsv | --idx-images F --idx-labels F) [--limit N] [--capture] "
    "[--interpolate-pos] "
    "[--json OUT]",
    "accuracy and ms per image of a ViT classifier over a list of images (PATH<TAB>LABEL) or IDX files",
    &runVisionEval};

} // namespace
