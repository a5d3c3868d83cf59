#include "ui/translate/translation_export.h"

#include "core/export/npy.h"
#include "core/io/json_file.h"
#include "core/util/error.h"
#include "ui/render/string_lists.h"
#include "ui/widgets/heatmap_view.h"

#include <QFile>
#include <QFileInfo>
#include <QPainter>
#include <QSvgGenerator>
#include <QTextStream>
#include <QWidget>

#include <fstream>

namespace attnlens::ui {

namespace {

Json tensorJson(const Tensor& t) {
    Json j;
    j["shape"] = t.shape();
    j["data"] = t.toVector();
    return j;
}

QString csvField(const QString& s) {
    if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) && !s.contains(QLatin1Char('\n')))
        return s;
    QString q = s;
    q.replace(QLatin1String("\""), QLatin1String("\"\""));
    return QLatin1Char('"') + q + QLatin1Char('"');
}

} // namespace

void writeAttentionJson(const QString& path, const TranslationDocument& doc) {
    const auto trace = doc.trace();
    if (!trace) throw Error(path.toStdString() + ": nothing to export yet (translate a sentence first)");
    Json j;
    j["source"] = trace->source;
    j["translation"] = trace->translation;
    j["source_tokens"] = trace->sourceTokens;
    j["target_tokens"] = trace->targetTokens;
    if (doc.snapshot()) j["decoder_input_tokens"] = toStdStrings(doc.snapshot()->targetInputTokens);
    j["model"] = doc.modelDir().toStdString();
    const AttentionKind kinds[] = {AttentionKind::EncoderSelf, AttentionKind::DecoderSelf,
                                   AttentionKind::Cross};
    const char* names[] = {"encoder_self", "decoder_self", "cross"};
    Json sel;
    sel["kind"] = names[static_cast<int>(doc.kind())];
    sel["layer"] = doc.layer();
    sel["head"] = doc.head() >= 0 ? Json(doc.head()) : Json(std::string(headFusionName(doc.fusion())));
    sel["word_level"] = doc.wordLevel();
    sel["hide_special"] = doc.hideSpecial();
    sel["value_weighted"] = doc.valueWeighted();
    sel["beam_node"] = doc.selectedBeamNode();
    j["selection"] = sel;
    const AttentionMatrix m = doc.currentMatrix();
    Json mj;
    mj["rows"] = toStdStrings(m.rowLabels);
    mj["columns"] = toStdStrings(m.columnLabels);
    Json rows = Json::array();
    for (Eigen::Index r = 0; r < m.values.rows(); ++r) {
        std::vector<float> row(m.values.row(r).begin(), m.values.row(r).end());
        rows.push_back(row);
    }
    mj["values"] = rows;
    j["matrix"] = mj;
    Json tensors;
    for (int i = 0; i < 3; ++i)
        tensors[names[i]] = tensorJson(doc.attentionTensor(kinds[i]));
    j["tensors"] = tensors;
    if (doc.valueWeighted()) { // beside the weights, as `attnlens-cli translate --value-weighted` writes them
        Json weighted;
        for (int i = 0; i < 3; ++i)
            weighted[names[i]] = tensorJson(doc.shownTensor(kinds[i]));
        j["value_weighted"] = weighted;
    }
    std::ofstream out(path.toStdString());
    if (!out) throw Error(path.toStdString() + ": cannot open for writing");
    out << j.dump();
    if (!out) throw Error(path.toStdString() + ": write failed");
}

void writeMatrixCsv(const QString& path, const AttentionMatrix& m) {
    if (m.empty()) throw Error(path.toStdString() + ": the current matrix is empty");
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Text | QIODevice::Truncate))
        throw Error(path.toStdString() + ": cannot open for writing");
    QTextStream s(&f);
    s << "query\\key";
    for (const QString& c : m.columnLabels)
        s << ',' << csvField(c);
    s << '\n';
    for (Eigen::Index r = 0; r < m.values.rows(); ++r) {
        s << csvField(m.rowLabels.value(static_cast<qsizetype>(r)));
        for (Eigen::Index c = 0; c < m.values.cols(); ++c)
            s << ',' << QString::number(double(m.values(r, c)), 'g', 9);
        s << '\n';
    }
    s.flush();
    if (f.error() != QFile::NoError) throw Error(path.toStdString() + ": write failed");
}

void writeAttentionNpy(const QString& path, const TranslationDocument& doc) {
    const Tensor t = doc.shownTensor(doc.kind()); // value-weighted when the page shows it so
    if (t.empty()) throw Error(path.toStdString() + ": no attention of this kind yet");
    writeNpy(path.toStdString(), t);
}

void saveWidgetPng(QWidget* widget, const QString& path) {
    if (!widget->grab().save(path, "PNG")) throw Error(path.toStdString() + ": cannot write the PNG");
}

void saveWidgetSvg(QWidget* widget, const QString& path, const QString& title) {
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(widget->size());
    gen.setViewBox(QRect(QPoint(0, 0), widget->size()));
    gen.setTitle(title);
    QPainter p;
    if (!p.begin(&gen)) throw Error(path.toStdString() + ": cannot write the SVG");
    widget->render(&p, QPoint(), QRegion(), QWidget::DrawChildren);
    p.end();
    if (!QFile::exists(path)) throw Error(path.toStdString() + ": cannot write the SVG");
}

namespace {

enum class ViewFormat { Png, Svg };

ViewFormat viewFormat(const QString& path) {
    const QString ext = QFileInfo(path).suffix().toLower();
    if (ext == QLatin1String("png")) return ViewFormat::Png;
    if (ext == QLatin1String("svg")) return ViewFormat::Svg;
    throw Error(path.toStdString() + ": views export as .png or .svg");
}

} // namespace

void saveView(const QString& path, const HeatmapView& heatmap, const QString& title) {
    const bool png = viewFormat(path) == ViewFormat::Png;
    if (!(png ? heatmap.savePng(path) : heatmap.saveSvg(path, title)))
        throw Error(path.toStdString() + (png ? ": cannot write the PNG" : ": cannot write the SVG"));
}

void saveView(const QString& path, QWidget* widget, const QString& title) {
    if (viewFormat(path) == ViewFormat::Png)
        saveWidgetPng(widget, path);
    else
        saveWidgetSvg(widget, path, title);
}

} // namespace attnlens::ui
