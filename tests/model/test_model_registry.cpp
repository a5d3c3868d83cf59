// The model registry (issue 37; label model: it reads the built-in models): one row per family, read by
// inspect, the CLI's defaults, the GUI's open / drop and the error messages — a folder's kind from its
// model_type or its diffusers layout, the built-in model of each kind, and the families a message lists.

#include "core/io/model_folder.h"
#include "core/registry/model_registry.h"
#include "core/util/error.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <set>

using namespace attnlens;

namespace {

const std::filesystem::path kData = ATTNLENS_TEST_DATA;

} // namespace

class TestModelRegistry : public QObject {
    Q_OBJECT
private slots:
    void familiesByModelType() {
        QCOMPARE(familyOfModelType("gpt2")->kind, ModelKind::Text);
        QCOMPARE(familyOfModelType("bert")->name, std::string_view("BERT"));
        QCOMPARE(familyOfModelType("marian")->kind, ModelKind::Marian);
        QCOMPARE(familyOfModelType("vit")->kind, ModelKind::Vit);
        QCOMPARE(familyOfModelType("dinov2_with_registers"), familyOfModelType("vit"));
        QCOMPARE(familyOfModelType("qwen3")->kind, ModelKind::Text);
        QCOMPARE(familyOfModelType("gemma3_text"), familyOfModelType("llama"));
        QCOMPARE(familyOfModelType("clip_text_model")->kind, ModelKind::Text);
        QVERIFY(familyOfModelType("mixtral") == nullptr);
        QVERIFY(familyOfModelType("") == nullptr);
        // Every model_type is read by one family only.
        std::set<std::string_view> seen;
        for (const ModelFamily& f : modelFamilies())
            for (std::string_view t : f.modelTypes)
                QVERIFY2(seen.insert(t).second, std::string(t).c_str());
        QCOMPARE(QString::fromStdString(supportedFamilies()),
                 QStringLiteral(
                     "Marian (translation), ViT / DINOv2 / CLIP / SigLIP (vision), diffusers UNet2DModel "
                     "(diffusion), Stable "
                     "Diffusion pipelines (text-to-image), BERT, GPT-2, Llama-style decoders and CLIP "
                     "text encoder (text)"));
    }

    void builtinModels() {
        for (ModelKind kind : {ModelKind::Marian, ModelKind::Vit, ModelKind::Diffusion, ModelKind::Text}) {
            QVERIFY(!builtinModelName(kind).empty());
            QCOMPARE(detectModelKind(builtinModelDir(kind)), kind); // the built-in model is of its kind
        }
        QVERIFY(builtinModelName(ModelKind::Unknown).empty());
        // the Text-to-image page's built-in model (tools/train/train_t2i.py; its training spans sessions)
        QCOMPARE(builtinModelName(ModelKind::TextToImage), std::string_view("sd-fashion-tiny"));
        // the Text page opens on the built-in Llama-architecture model; gpt2-en-tiny stays beside it
        QCOMPARE(builtinModelDir(ModelKind::Text).filename().string(), std::string("llama-en-tiny"));
        QCOMPARE(detectModelKind(builtinModelDir("gpt2-en-tiny")), ModelKind::Text);
    }

    void folderKinds() {
        QCOMPARE(detectModelKind(kData / "text" / "gpt2"), ModelKind::Text);
        QCOMPARE(detectModelKind(kData / "text" / "bert-cased"), ModelKind::Text);
        QCOMPARE(detectModelKind(kData / "marian" / "tiny-f32"), ModelKind::Marian);
        QCOMPARE(detectModelKind(kData / "vit" / "rgb"), ModelKind::Vit);
        QCOMPARE(detectModelKind(kData / "unet" / "bare-head8"), ModelKind::Diffusion);
        QCOMPARE(detectModelKind(kData / "unet" / "cond-pipeline"), ModelKind::Diffusion);
        QCOMPARE(detectModelKind(kData / "t2i" / "tiny-pipe"), ModelKind::TextToImage); // a text encoder
        QTemporaryDir dir; // a model_type no family reads
        const std::filesystem::path d = dir.path().toStdString();
        std::ofstream(d / "config.json") << R"({"model_type": "mixtral"})";
        std::ofstream(d / "model.safetensors") << "x";
        QCOMPARE(detectModelKind(d), ModelKind::Unknown);
        QCOMPARE(inspectModelFolder(d).modelType, std::string("mixtral"));
        QCOMPARE(detectModelKind(kData / "llm" / "qwen3-qknorm"), ModelKind::Text);
        QCOMPARE(detectModelKind(kData / "llm" / "llama-sharded"), ModelKind::Text); // shards only
        QVERIFY_THROWS_EXCEPTION(Error, detectModelKind(d / "missing"));
    }
};

QTEST_GUILESS_MAIN(TestModelRegistry)
#include "test_model_registry.moc"
