#include "cli_unet_args.h"

#include "core/io/model_folder.h"
#include "core/io/npy_reader.h"
#include "core/util/error.h"

#include <charconv>
#include <cmath>

namespace cli {

using namespace attnlens;

DiffusionModel loadDiffusion(const Args& args) {
    const auto dir = cli::modelDir(args, attnlens::ModelKind::Diffusion);
    return loadDiffusionModel(dir);
}

std::optional<int> parseClass(const Args& args, const DiffusionModel& model) {
    const auto v = args.value("--class");
    if (!v) return std::nullopt;
    const auto& c = model.unet->config();
    if (c.numClassEmbeds == 0)
        throw UsageError("--class: this model is unconditional (it has no class embedding)");
    int idx = -1;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), idx);
    if (ec != std::errc() || ptr != v->data() + v->size()) {
        idx = -1;
        for (size_t i = 0; i < c.classNames.size(); ++i)
            if (c.classNames[i] == *v) idx = static_cast<int>(i);
        if (idx < 0)
            throw UsageError("--class: '" + *v +
                             "' is neither a class number nor a class name of this model");
    }
    if (idx < 0 || idx >= c.numClassEmbeds)
        throw UsageError("--class: " + *v + " is out of range (the model has " +
                         std::to_string(c.numClassEmbeds) + " classes, numbered from 0)");
    return idx;
}

Tensor readSample(const std::string& path) {
    Tensor t = readNpy(path);
    if (t.rank() == 4 && t.dim(0) == 1) t = t.reshaped({t.dim(1), t.dim(2), t.dim(3)});
    if (t.rank() != 3)
        throw Error("'" + path + "': shape " + shapeToString(t.shape()) +
                    ", expected [1, channels, height, width]");
    for (float v : t.values())
        if (!std::isfinite(v)) throw Error("'" + path + "': holds a value that is not finite");
    return t;
}

uint64_t parseSeed(const Args& args) {
    const auto v = args.value("--seed");
    if (!v) return 0;
    uint64_t seed = 0;
    const auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), seed);
    if (ec != std::errc() || ptr != v->data() + v->size())
        throw UsageError("--seed: expected a non-negative integer, got '" + *v + "'");
    return seed;
}

void refuseTextConditioned(const DiffusionModel& model, const std::string& command) {
    if (model.unet->textConditioned())
        throw UsageError(command + ": '" + model.folder.dir.string() +
                         "' holds a text-conditioned U-Net (UNet2DConditionModel); " + command +
                         " runs UNet2DModel folders (`unet --encoder-states` runs this one)");
}

UnetInput readUnetInput(const Args& args, const DiffusionModel& model) {
    if (!args.has("--sample")) throw UsageError("--sample X.npy is required");
    if (!args.has("--timestep")) throw UsageError("--timestep T is required");
    UnetInput in;
    in.timestep = args.intValue("--timestep", 0, 0, 100000);
    in.classLabel = parseClass(args, model);
    if (model.unet->config().numClassEmbeds > 0 && !in.classLabel)
        throw UsageError("--class: this model is class-conditional (" +
                         std::to_string(model.unet->config().numClassEmbeds) +
                         " classes, numbered from 0): give one");
    if (in.timestep >= model.scheduler.numTrainTimesteps)
        throw UsageError("--timestep: " + std::to_string(in.timestep) +
                         " is out of range (the scheduler has " +
                         std::to_string(model.scheduler.numTrainTimesteps) + " timesteps, 0.." +
                         std::to_string(model.scheduler.numTrainTimesteps - 1) + ")");
    in.sample = readSample(*args.value("--sample"));
    model.unet->checkSample(in.sample.shape());
    const auto& config = model.unet->config();
    const auto states = args.value("--encoder-states");
    if (config.textConditioned && !states)
        throw UsageError(
            "--encoder-states E.npy is required: this U-Net is text-conditioned (the text encoder's "
            "last hidden state, [1, 77, " +
            std::to_string(config.crossAttentionDim) + "])");
    if (!config.textConditioned && states)
        throw UsageError("--encoder-states: this U-Net is not text-conditioned (no cross-attention)");
    if (states) {
        in.encoderStates = readNpy(*states);
        if (in.encoderStates.rank() == 3 && in.encoderStates.dim(0) == 1)
            in.encoderStates = in.encoderStates.reshaped({in.encoderStates.dim(1), in.encoderStates.dim(2)});
        try {
            model.unet->checkText(in.conditioning());
        } catch (const Error& e) {
            throw Error("'" + *states + "': " + e.what());
        }
    }
    return in;
}

attnlens::UNetConditioning UnetInput::conditioning() const {
    UNetConditioning c(classLabel);
    c.encoderHiddenStates = encoderStates;
    return c;
}

} // namespace cli
