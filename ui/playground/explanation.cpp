#include "ui/playground/explanation.h"

#include "ui/widgets/page_parts.h"

#include <QApplication>

#include <cmath>

namespace attnlens::ui {

using Stage = PlaygroundModel::Stage;

namespace {

constexpr int kMaxTerms = 6; // longer sums show their first terms, "…" and the last one

QString tok(const PlaygroundModel& m, int i) {
    return QStringLiteral("<b>%1</b>").arg(m.tokens().value(i).toHtmlEscaped());
}

QString sub(const QString& base, const QString& index) {
    return QStringLiteral("%1<sub>%2</sub>").arg(base, index.toHtmlEscaped());
}

// "a + b + c" with at most kMaxTerms terms (first ones, "…", the last one).
QString joinTerms(const QStringList& terms, const QString& separator) {
    if (terms.size() <= kMaxTerms) return terms.join(separator);
    QStringList shown = terms.mid(0, kMaxTerms - 2);
    shown << QStringLiteral("…") << terms.back();
    return shown.join(separator);
}

QString headNote(const PlaygroundModel& m) {
    if (m.heads() == 1) return {};
    const int first = m.selectedHead() * m.dK();
    return QObject::tr(" (head %1: features %2–%3)").arg(m.selectedHead()).arg(first).arg(first + m.dK() - 1);
}

QString vectorText(const RowMatrix& row) {
    QStringList parts;
    for (int c = 0; c < row.cols(); ++c)
        parts << formatNumber(row(0, c));
    return QStringLiteral("[") + joinTerms(parts, QStringLiteral(", ")) + QStringLiteral("]");
}

} // namespace

QString formatNumber(double value, int decimals) {
    QString text = QString::number(value, 'f', decimals);
    if (text.startsWith(QLatin1Char('-')) && text.mid(1).toDouble() == 0.0) text = text.mid(1);
    return text.replace(QLatin1Char('-'), QChar(0x2212));
}

QString stageFormula(const PlaygroundModel& m, Stage stage) {
    switch (stage) {
    case Stage::Scores:
        return QStringLiteral("S = Q·K<sup>T</sup>");
    case Stage::Scaled:
        return QStringLiteral("S / √d<sub>k</sub> = S / √%1 = S / %2")
            .arg(m.dK())
            .arg(formatNumber(std::sqrt(static_cast<double>(m.dK())), 2));
    case Stage::Masked:
        if (m.maskMode() == PlaygroundModel::MaskMode::None)
            return QObject::tr("M = S / √d<sub>k</sub> &nbsp;(no mask)");
        return QObject::tr("M = S / √d<sub>k</sub>, −∞ where mask = 0");
    case Stage::Weights:
        return QObject::tr("A = softmax(M) &nbsp;(row by row)");
    case Stage::Output:
        if (m.heads() == 1) return QStringLiteral("O = A·V");
        return QStringLiteral("O<sub>h</sub> = A<sub>h</sub>·V<sub>h</sub>");
    }
    return {};
}

QString stageDetail(const PlaygroundModel& m, Stage stage) {
    const int i = m.focusQuery(), j = m.focusKey(), h = m.selectedHead();
    const QString qi = m.tokens().value(i), kj = m.tokens().value(j);
    const QString cell = QStringLiteral("[%1, %2]").arg(tok(m, i), tok(m, j));
    switch (stage) {
    case Stage::Scores:
        return QStringLiteral("S%1 = %2 · %3 = <b>%4</b>")
            .arg(cell, sub(QStringLiteral("q"), qi), sub(QStringLiteral("k"), kj),
                 formatNumber(m.stage(Stage::Scores, h)(i, j)));
    case Stage::Scaled:
        return QStringLiteral("%1 / %2 = <b>%3</b>")
            .arg(formatNumber(m.stage(Stage::Scores, h)(i, j)),
                 formatNumber(std::sqrt(static_cast<double>(m.dK()))),
                 formatNumber(m.stage(Stage::Scaled, h)(i, j)));
    case Stage::Masked:
        if (m.effectiveMask()(i, j) == 0.0f)
            return QObject::tr("mask%1 = 0 → <b>−∞</b> (stored as −10<sup>9</sup>)").arg(cell);
        return QObject::tr("mask%1 = 1 → kept: <b>%2</b>")
            .arg(cell, formatNumber(m.stage(Stage::Masked, h)(i, j)));
    case Stage::Weights: {
        const RowMatrix w = m.stage(Stage::Weights, h);
        return QObject::tr("A%1 = <b>%2</b> &nbsp;·&nbsp; row %3 sums to %4")
            .arg(cell, formatNumber(w(i, j)), tok(m, i), formatNumber(w.row(i).sum(), 3));
    }
    case Stage::Output: {
        const RowMatrix o = m.stage(Stage::Output, h);
        return QStringLiteral("%1 = Σ<sub>j</sub> A[%2, j]·v<sub>j</sub> = %3")
            .arg(sub(QStringLiteral("o"), qi), tok(m, i), vectorText(o.row(i)));
    }
    }
    return {};
}

QString valueWeightedFormula() {
    return QObject::tr("Ã<sub>ij</sub> = A<sub>ij</sub>·‖v<sub>j</sub>·W<sub>O</sub>‖ / Σ<sub>k</sub> "
                       "A<sub>ik</sub>·‖v<sub>k</sub>·W<sub>O</sub>‖");
}

QString valueWeightedDetail(const PlaygroundModel& m) {
    const int i = m.focusQuery(), j = m.focusKey(), h = m.selectedHead();
    const RowMatrix a = m.stage(Stage::Weights, h);
    const Eigen::VectorXf n = m.valueNorms(h);
    if (a.size() == 0 || n.size() != a.cols()) return {};
    const double total = (a.row(i).transpose().cwiseProduct(n)).cast<double>().sum();
    return QObject::tr("Ã[%1, %2] = %3 × %4 / %5 = <b>%6</b>")
        .arg(tok(m, i), tok(m, j), formatNumber(a(i, j)), formatNumber(n[j]), formatNumber(total),
             formatNumber(total > 0 ? a(i, j) * n[j] / total : 0.0));
}

QString explainFocus(const PlaygroundModel& m) {
    const int i = m.focusQuery(), j = m.focusKey(), h = m.selectedHead();
    const int dk = m.dK(), first = h * dk;
    const QString qi = m.tokens().value(i), kj = m.tokens().value(j);
    const RowMatrix& q = m.input(PlaygroundModel::Input::Query);
    const RowMatrix& k = m.input(PlaygroundModel::Input::Key);
    const RowMatrix scores = m.stage(Stage::Scores, h);
    const RowMatrix scaled = m.stage(Stage::Scaled, h);
    const RowMatrix masked = m.stage(Stage::Masked, h);
    const RowMatrix weights = m.stage(Stage::Weights, h);
    const RowMatrix output = m.stage(Stage::Output, h);
    const RowMatrix keep = m.effectiveMask();
    const bool isMasked = keep(i, j) == 0.0f;

    QStringList lines;
    lines << QObject::tr("<b>How %1 attends to %2</b>%3")
                 .arg(tok(m, i), tok(m, j), headNote(m).toHtmlEscaped());

    QStringList products;
    for (int c = first; c < first + dk; ++c)
        products << QStringLiteral("%1×%2").arg(formatNumber(q(i, c)), formatNumber(k(j, c)));
    lines << QObject::tr("① score: %1 · %2 = %3 = <b>%4</b>")
                 .arg(sub(QStringLiteral("q"), qi), sub(QStringLiteral("k"), kj),
                      joinTerms(products, QStringLiteral(" + ")), formatNumber(scores(i, j)));
    lines << QObject::tr("② scale: %1 / √%2 = <b>%3</b> &nbsp;<small>(keeps the softmax from saturating as "
                         "d<sub>k</sub> "
                         "grows)</small>")
                 .arg(formatNumber(scores(i, j)))
                 .arg(dk)
                 .arg(formatNumber(scaled(i, j)));
    if (m.maskMode() == PlaygroundModel::MaskMode::None)
        lines << QObject::tr("③ mask: none, the value stays <b>%1</b>").arg(formatNumber(masked(i, j)));
    else if (isMasked)
        lines << QObject::tr("③ mask = 0: replaced by <b>−∞</b> (−10<sup>9</sup>), so %1 cannot see %2")
                     .arg(tok(m, i), tok(m, j));
    else
        lines << QObject::tr("③ mask = 1: kept, <b>%1</b>").arg(formatNumber(masked(i, j)));

    // Softmax as e^x / Σ e^x; for large scores show e^(x − max), which gives the same quotient.
    const float rowMax = masked.row(i).maxCoeff();
    const bool shift = rowMax > 20.0f;
    auto expOf = [&](int col) -> QString {
        if (keep(i, col) == 0.0f && m.maskMode() != PlaygroundModel::MaskMode::None &&
            !(keep.row(i).array() == 0.0f).all())
            return QStringLiteral("0");
        return formatNumber(std::exp(static_cast<double>(masked(i, col)) - (shift ? rowMax : 0.0)));
    };
    QStringList expTerms;
    double denominator = 0.0;
    for (int c = 0; c < masked.cols(); ++c) {
        expTerms << expOf(c);
        denominator += std::exp(static_cast<double>(masked(i, c)) - (shift ? rowMax : 0.0));
    }
    const QString e = shift ? QObject::tr("e<sup>x − max</sup>") : QStringLiteral("e<sup>x</sup>");
    lines << QObject::tr("④ softmax: %1 of this cell / Σ over row %2 = %3 / (%4) = <b>%5</b>")
                 .arg(e, tok(m, i), expOf(j), joinTerms(expTerms, QStringLiteral(" + ")),
                      formatNumber(weights(i, j)));
    if (!(keep.row(i).array() != 0.0f).any() && m.maskMode() != PlaygroundModel::MaskMode::None)
        lines << QObject::tr("<span style='color:%3'>every key of %1 is masked: all scores are equal, so the "
                             "weights come out uniform (1/%2 each)</span>")
                     .arg(tok(m, i))
                     .arg(keep.cols())
                     .arg(errorColor(QApplication::palette()).name());

    QStringList mix;
    for (int c = 0; c < weights.cols(); ++c)
        mix << QStringLiteral("%1·%2").arg(formatNumber(weights(i, c)),
                                           sub(QStringLiteral("v"), m.tokens().value(c)));
    lines << QObject::tr("⑤ output: %1 = %2 = %3")
                 .arg(sub(QStringLiteral("o"), qi), joinTerms(mix, QStringLiteral(" + ")),
                      vectorText(output.row(i)));
    // One paragraph per step, a little apart: the steps read as a list, not as a block of text.
    const QString open = QStringLiteral("<p style='margin-top:5px; margin-bottom:0px'>");
    return open + lines.join(QStringLiteral("</p>") + open) + QStringLiteral("</p>");
}

} // namespace attnlens::ui
