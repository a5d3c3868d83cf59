#pragma once
// The options `unet`, `diffuse` and `neuron` share for diffusion models: --model (default the built-in
// ddpm-fashion-tiny), --class (a number from 0 or an id2label name) and a .npy sample with its timestep.

#include "cli_common.h"
#include "core/diffusion/diffusion_model.h"
#include "core/tensor/tensor.h"

#include <optional>
#include <string>

namespace cli {

attnlens::DiffusionModel loadDiffusion(const Args& args);
// Throws a UsageError naming `command` when the model's U-Net is text-conditioned (UNet2DConditionModel):
// the commands that run only unconditional and class-conditional U-Nets.
void refuseTextConditioned(const attnlens::DiffusionModel& model, const std::string& command);
// --class: an index (from 0) or a class name from the config's id2label; nullopt when not given.
std::optional<int> parseClass(const Args& args, const attnlens::DiffusionModel& model);
// --seed S: a non-negative integer (default 0).
uint64_t parseSeed(const Args& args);
// A .npy sample [1, C, H, W] or [C, H, W] → [C, H, W]; non-finite values are errors.
attnlens::Tensor readSample(const std::string& path);

// One U-Net forward's input: --sample X.npy --timestep T [--class C] [--encoder-states E.npy], checked
// against the model (a class-conditional model needs --class, a text-conditioned one --encoder-states [1,
// tokens, D] or [tokens, D], the timestep lies in the scheduler's range, the sample fits).
struct UnetInput {
    attnlens::Tensor sample;
    int timestep = 0;
    std::optional<int> classLabel;
    attnlens::Tensor encoderStates; // [tokens, cross_attention_dim] or empty

    attnlens::UNetConditioning conditioning() const;
};
UnetInput readUnetInput(const Args& args, const attnlens::DiffusionModel& model);

} // namespace cli
