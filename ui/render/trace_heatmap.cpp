#include "ui/render/trace_heatmap.h"

#include "core/util/error.h"

#include <QCoreApplication>

namespace attnlens::ui {

namespace {

QString trMatrix(const char* text) {
    return QCoreApplication::translate("attnlens::ui::AttentionMatrixView", text);
}

QStringList toLabels(const std::vector<std::string>& pieces) {
    QStringList out;
    out.reserve(static_cast<qsizetype>(pieces.size()));
    for (const std::string& p : pieces)
        out << QString::fromStdString(p);
    return out;
}

} // namespace

QString traceAxisName(AttentionKind kind, bool rows) {
    if (rows) return kind == AttentionKind::EncoderSelf ? trMatrix("source") : trMatrix("target");
    switch (kind) {
    case AttentionKind::DecoderSelf:
        return trMatrix("decoder input");
    case AttentionKind::EncoderSelf:
    case AttentionKind::Cross:
        break;
    }
    return trMatrix("source");
}

QString traceAxisTitle(AttentionKind kind, bool rows) {
    return (rows ? trMatrix("%1 (query)") : trMatrix("%1 (key)")).arg(traceAxisName(kind, rows));
}

HeatmapScene traceHeatmapScene(const TranslationTrace& trace, AttentionKind kind, int layer,
                               const HeadSelection& heads, const std::string& decoderStartPiece) {
    const Tensor& t = traceAttention(trace, kind); // [L, H, Q, K]
    if (t.rank() != 4 || t.dim(2) == 0 || t.dim(3) == 0)
        throw Error(std::string("the translation has no ") + std::string(attentionKindId(kind)) +
                    " attention");
    if (layer < 0 || layer >= t.dim(0))
        throw Error("layer " + std::to_string(layer) + " is out of range [0, " +
                    std::to_string(t.dim(0) - 1) + "]");
    if (heads.head >= t.dim(1))
        throw Error("head " + std::to_string(heads.head) + " is out of range [0, " +
                    std::to_string(t.dim(1) - 1) + "]");
    const TraceAxes axes = traceAxes(trace, kind, decoderStartPiece);
    HeatmapScene s;
    s.values = layerAttention(t, layer, heads);
    if (static_cast<int>(axes.rows.size()) == s.rows()) s.rowLabels = toLabels(axes.rows);
    if (static_cast<int>(axes.columns.size()) == s.columns()) s.columnLabels = toLabels(axes.columns);
    s.rowTitle = traceAxisTitle(kind, true);
    s.columnTitle = traceAxisTitle(kind, false);
    s.lo = 0.0f;
    s.hi = 1.0f;
    s.updateImage();
    return s;
}

} // namespace attnlens::ui
