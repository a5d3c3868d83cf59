#pragma once
// Inputs that make a page's run last long enough to act in the middle of it (test_faults,
// test_close_while_running).

#include "core/io/json_file.h"
#include "core/io/safetensors.h"

#include <QImage>
#include <QLinearGradient>
#include <QPainter>
#include <QString>

#include <filesystem>
#include <fstream>
#include <vector>

namespace attnlens::test {

namespace fs = std::filesystem;

inline const fs::path kTinyMarian = fs::path(ATTNLENS_TEST_DATA) / "marian" / "tiny-f32";

inline void writeJson(const fs::path& path, const Json& json) {
    std::ofstream(path) << json.dump(1);
}

// tiny-f32 with room for 1024 positions and final_logits_bias[</s>] = −1000: it decodes to the length limit.
inline void writeNeverEndingMarian(const fs::path& dir) {
    fs::create_directories(dir);
    for (const char* name : {"source.spm", "target.spm", "vocab.json", "tokenizer_config.json"})
        fs::copy_file(kTinyMarian / name, dir / name);
    Json config = readJsonFile(kTinyMarian / "config.json");
    config["max_position_embeddings"] = 1024;
    config["max_length"] = 1024;
    writeJson(dir / "config.json", config);
    Json generation = readJsonFile(kTinyMarian / "generation_config.json");
    generation["max_length"] = 1024;
    writeJson(dir / "generation_config.json", generation);
    const auto weights = TensorFile::open(kTinyMarian / "model.safetensors");
    std::vector<TensorToWrite> out;
    for (const auto& info : weights.tensors()) {
        Tensor t = weights.load(info);
        if (info.name == "final_logits_bias") t.data()[config["eos_token_id"].get<int>()] = -1000.0f;
        out.push_back({info.name, std::move(t)});
    }
    writeSafeTensors(dir / "model.safetensors", out);
}

// A smooth 8000×6000 picture as JPEG: decoding it is the longest part of analysing it.
inline bool writeLargePicture(const QString& path) {
    QImage image(8000, 6000, QImage::Format_RGB32);
    QPainter p(&image);
    QLinearGradient g(0, 0, 8000, 6000);
    g.setColorAt(0, Qt::darkBlue);
    g.setColorAt(1, Qt::yellow);
    p.fillRect(image.rect(), g);
    p.end();
    return image.save(path, "JPG", 90);
}

} // namespace attnlens::test
