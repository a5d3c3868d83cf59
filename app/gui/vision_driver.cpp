#include "vision_driver.h"

#include "core/analysis/attention_maps.h"
#include "ui/vision/vision_document.h"

#include <QRegularExpression>

#include <vector>

QString applyVisionScript(attnlens::ui::VisionDocument* doc, const VisionScript& s) {
    if (!s.layer.isEmpty()) {
        bool ok = false;
        const int l = s.layer.toInt(&ok);
        if (!ok || l < 0 || l >= doc->numLayers())
            return QStringLiteral("--layer %1: expected 0..%2").arg(s.layer).arg(doc->numLayers() - 1);
        doc->setLayer(l);
    }
    if (!s.head.isEmpty()) {
        try {
            const attnlens::HeadSelection heads =
                attnlens::parseHeadSelection(s.head.toStdString(), doc->numHeads());
            doc->setFusion(heads.fusion);
            doc->setHead(heads.head);
        } catch (const std::exception& e) {
            return QStringLiteral("--%1").arg(QString::fromUtf8(e.what()));
        }
    }
    doc->setKeySide(s.keySide);
    if (s.query == QLatin1String("norms")) { // the token-norm map instead of attention
        doc->setTokenNorms(true);
        return {};
    }
    if (const auto t = QRegularExpression(QStringLiteral("^(text|relevance):(\\d+)$")).match(s.query);
        t.hasMatch()) {
        const int k = t.captured(2).toInt();
        if (!doc->image() || k >= static_cast<int>(doc->image()->texts.size()))
            return QStringLiteral("--query %1: no such text (give the texts with --texts; numbered from 0)")
                .arg(s.query);
        doc->setTextRelevance(t.captured(1) == QLatin1String("relevance"));
        doc->setTextMap(k);
        return {};
    }
    // "probe": SigLIP's pooling probe, which the summary query (CLS's place) is for a model without CLS.
    if (s.query.isEmpty() || s.query == QLatin1String("cls") || s.query == QLatin1String("probe")) return {};
    if (const auto r = QRegularExpression(QStringLiteral("^reg(\\d+)$")).match(s.query); r.hasMatch()) {
        const int k = r.captured(1).toInt();
        if (k >= doc->registers())
            return QStringLiteral("--query %1: the model has %2 register(s)")
                .arg(s.query)
                .arg(doc->registers());
        doc->selectRegister(k);
        return {};
    }
    std::vector<int> patches;
    for (const QString& item : s.query.split(QLatin1Char(';'), Qt::SkipEmptyParts)) {
        const auto m = QRegularExpression(QStringLiteral("^(\\d+),(\\d+)$")).match(item.trimmed());
        const int r = m.hasMatch() ? m.captured(1).toInt() : -1,
                  c = m.hasMatch() ? m.captured(2).toInt() : -1;
        if (r < 0 || r >= doc->gridRows() || c < 0 || c >= doc->gridCols())
            return QStringLiteral("--query %1: expected cls, norms or ROW,COL inside the %2×%3 patch grid")
                .arg(item)
                .arg(doc->gridRows())
                .arg(doc->gridCols());
        patches.push_back(r * doc->gridCols() + c);
    }
    doc->selectPatches(std::move(patches));
    return {};
}
