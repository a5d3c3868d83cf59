#include "ui/playground/playground_model.h"

#include "core/analysis/value_weighting.h"
#include "core/util/error.h"

#include <QDebug>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

namespace attnlens::ui {

namespace {

// The worked example: four German tokens and hand-made 4-d vectors whose dimensions mean
// (question word, verb, subject, addressee). A key says what a token *is*, a query what it *looks
// for*: "Wie" and "es" look for the verb, "geht" looks for its subject "es", "dir" looks for the
// verb and the question word. V gives each token a distinct content vector.
const QStringList kExampleTokens = {QStringLiteral("Wie"), QStringLiteral("geht"), QStringLiteral("es"),
                                    QStringLiteral("dir")};
// clang-format off
const float kExampleQ[4][4] = {{0.2f, 2.0f, 0.0f, 0.5f},
                               {0.5f, 0.0f, 2.0f, 0.0f},
                               {0.0f, 2.0f, 0.3f, 0.0f},
                               {1.0f, 1.5f, 0.0f, 0.0f}};
const float kExampleK[4][4] = {{1.0f, 0.0f, 0.0f, 0.2f},
                               {0.0f, 1.0f, 0.0f, 0.0f},
                               {0.0f, 0.2f, 1.0f, 0.0f},
                               {0.0f, 0.0f, 0.0f, 1.0f}};
const float kExampleV[4][4] = {{1.0f, 0.0f, 0.5f, 0.0f},
                               {0.0f, 1.0f, 0.0f, 0.5f},
                               {0.5f, 0.0f, 1.0f, 0.0f},
                               {0.0f, 0.5f, 0.0f, 1.0f}};
// clang-format on

// A reproducible N(0, 1) sample, rounded to one decimal, for one entry of one matrix. Box–Muller on
// std::mt19937 (whose output the standard fixes) rather than std::normal_distribution (whose
// algorithm it does not), so a seed gives the same matrices on every platform; keyed by position so
// that growing and shrinking a random matrix keeps the values it already had.
float seededValue(int seed, int which, int row, int col) {
    std::seed_seq seq{seed, which, row, col};
    std::mt19937 gen(seq);
    const double u1 = (static_cast<double>(gen()) + 0.5) / 4294967296.0;
    const double u2 = (static_cast<double>(gen()) + 0.5) / 4294967296.0;
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    return static_cast<float>(std::round(z * 10.0) / 10.0);
}

QString defaultToken(int index) {
    return QStringLiteral("t%1").arg(index + 1);
}

} // namespace

PlaygroundModel::PlaygroundModel(QObject* parent)
    : QObject(parent), m_q(kMaxLength, kMaxDModel), m_k(kMaxLength, kMaxDModel), m_v(kMaxLength, kMaxDModel),
      m_wo(RowMatrix::Identity(kMaxDModel, kMaxDModel)),
      m_customMask(RowMatrix::Ones(kMaxLength, kMaxLength)) {
    for (int i = 0; i < kMaxLength; ++i)
        m_tokenStore.append(defaultToken(i));
    applyWorkedExample();
}

QList<int> PlaygroundModel::validHeadCounts(int dModel, int dValue) {
    if (dValue < 0) dValue = dModel;
    QList<int> counts;
    for (int h = 1; h <= std::min(dModel, dValue); ++h)
        if (dModel % h == 0 && dValue % h == 0) counts.append(h);
    return counts;
}

const RowMatrix& PlaygroundModel::store(Input which) const {
    switch (which) {
    case Input::Query:
        return m_q;
    case Input::Key:
        return m_k;
    case Input::Value:
        break;
    case Input::OutputProjection:
        return m_wo;
    }
    return m_v;
}

RowMatrix& PlaygroundModel::store(Input which) {
    return const_cast<RowMatrix&>(static_cast<const PlaygroundModel*>(this)->store(which));
}

RowMatrix PlaygroundModel::input(Input which) const {
    return store(which).topLeftCorner(inputRows(which), inputWidth(which));
}

RowMatrix PlaygroundModel::effectiveMask() const {
    const int n = sequenceLength();
    RowMatrix keep = RowMatrix::Ones(n, n);
    switch (m_maskMode) {
    case MaskMode::None:
        break;
    case MaskMode::Causal:
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j)
                keep(i, j) = 0.0f;
        break;
    case MaskMode::Padding:
        for (int i = 0; i < n; ++i)
            for (int j = n - m_padding; j < n; ++j)
                keep(i, j) = 0.0f;
        break;
    case MaskMode::Custom:
        keep = m_customMask.topLeftCorner(n, n);
        break;
    }
    return keep;
}

QList<int> PlaygroundModel::fullyMaskedRows() const {
    QList<int> rows;
    if (m_maskMode == MaskMode::None) return rows;
    const RowMatrix keep = effectiveMask();
    for (int i = 0; i < keep.rows(); ++i)
        if ((keep.row(i).array() == 0.0f).all()) rows.append(i);
    return rows;
}

RowMatrix PlaygroundModel::stage(Stage stage, int head) const {
    if (!m_result.stages || head < 0 || head >= m_heads) return {};
    const AttentionStages& s = *m_result.stages;
    switch (stage) {
    case Stage::Scores:
        return s.scores.slice2d({head});
    case Stage::Scaled:
        return s.scaled.slice2d({head});
    case Stage::Masked:
        return s.masked.slice2d({head});
    case Stage::Weights:
        return s.weights.slice2d({head});
    case Stage::Output:
        return s.output.slice2d({head});
    }
    return {};
}

Eigen::VectorXf PlaygroundModel::valueNorms(int head) const {
    if (head < 0 || head >= m_heads) return {};
    const int dv = dV();
    const RowMatrix v = input(Input::Value), wo = input(Input::OutputProjection);
    const RowMatrix sent = v.middleCols(head * dv, dv) * wo.middleRows(head * dv, dv); // [n, d_v]
    return sent.rowwise().norm();
}

RowMatrix PlaygroundModel::valueWeightedWeights(int head) const {
    RowMatrix w = stage(Stage::Weights, head);
    if (w.size() == 0) return w;
    valueWeightRows(w, valueNorms(head).transpose());
    return w;
}

RowMatrix PlaygroundModel::output() const {
    return m_result.output.matrix();
}

// --- presets ---------------------------------------------------------------------------------

void PlaygroundModel::applyWorkedExample() {
    // The example occupies the top-left 4 × 4; the rest of the store gets seeded values so that
    // growing n or d_model shows numbers rather than zeros.
    m_preset = Preset::WorkedExample;
    for (Input which : {Input::Query, Input::Key, Input::Value}) {
        RowMatrix& m = store(which);
        const auto& example = which == Input::Query ? kExampleQ : which == Input::Key ? kExampleK : kExampleV;
        for (int r = 0; r < kMaxLength; ++r)
            for (int c = 0; c < kMaxDModel; ++c)
                m(r, c) = r < 4 && c < 4 ? example[r][c] : fillValue(which, r, c);
    }
    // W_O starts as the identity: the result equals the concatenation until the user edits it.
    m_wo = RowMatrix::Identity(kMaxDModel, kMaxDModel);
    for (int i = 0; i < kMaxLength; ++i)
        m_tokenStore[i] = i < 4 ? kExampleTokens[i] : defaultToken(i);
    m_n = 4;
    m_dModel = 4;
    m_dValue = 4;
    m_valueTied = true;
    if (4 % m_heads != 0) m_heads = 1;
    m_head = std::min(m_head, m_heads - 1);
    m_padding = std::clamp(m_padding, 1, 3);
    m_focusQuery = 1; // "geht" …
    m_focusKey = 2;   // … looking at "es"
    recompute();
}

void PlaygroundModel::applyRandom(int seed) {
    m_seed = seed;
    m_preset = Preset::Random;
    for (Input which : {Input::Query, Input::Key, Input::Value}) {
        RowMatrix& m = store(which);
        for (int r = 0; r < kMaxLength; ++r)
            for (int c = 0; c < kMaxDModel; ++c)
                m(r, c) = fillValue(which, r, c);
    }
    for (int r = 0; r < kMaxDModel; ++r)
        for (int c = 0; c < kMaxDModel; ++c)
            m_wo(r, c) = fillValue(Input::OutputProjection, r, c);
    recompute();
}

void PlaygroundModel::applyIdentity() {
    m_preset = Preset::Identity;
    for (Input which : {Input::Query, Input::Key, Input::Value})
        store(which) = RowMatrix::Identity(kMaxLength, kMaxDModel);
    m_wo = RowMatrix::Identity(kMaxDModel, kMaxDModel);
    recompute();
}

float PlaygroundModel::fillValue(Input which, int row, int col) const {
    return seededValue(m_seed, static_cast<int>(which), row, col);
}

// --- shape -----------------------------------------------------------------------------------

void PlaygroundModel::resize(int n, int width, int valueWidth) {
    m_n = std::clamp(n, 1, kMaxLength);
    m_dModel = std::clamp(width, 1, kMaxDModel);
    m_dValue = std::clamp(valueWidth, 1, kMaxDModel);
    if (m_dModel % m_heads != 0 || m_dValue % m_heads != 0) {
        const QList<int> counts = validHeadCounts(m_dModel, m_dValue);
        m_heads = *std::prev(std::upper_bound(counts.begin(), counts.end(), m_heads));
    }
    m_head = std::min(m_head, m_heads - 1);
    m_padding = m_n > 1 ? std::clamp(m_padding, 1, m_n - 1) : 0;
    m_focusQuery = std::min(m_focusQuery, m_n - 1);
    m_focusKey = std::min(m_focusKey, m_n - 1);
}

void PlaygroundModel::setSequenceLength(int n) {
    if (n == sequenceLength()) return;
    resize(n, dModel(), dValue());
    recompute();
}

void PlaygroundModel::setDModel(int dModel) {
    if (dModel == this->dModel()) return;
    resize(sequenceLength(), dModel, m_valueTied ? dModel : dValue());
    recompute();
}

void PlaygroundModel::setDValue(int dValue) {
    if (dValue == this->dValue()) return;
    m_valueTied = dValue == dModel();
    resize(sequenceLength(), dModel(), dValue);
    recompute();
}

bool PlaygroundModel::setHeads(int heads) {
    if (heads < 1 || dModel() % heads != 0 || dValue() % heads != 0) return false;
    if (heads == m_heads) return true;
    m_heads = heads;
    m_head = std::min(m_head, m_heads - 1);
    recompute();
    return true;
}

void PlaygroundModel::setInputValue(Input which, int row, int col, float value) {
    RowMatrix& m = store(which);
    if (row < 0 || row >= inputRows(which) || col < 0 || col >= inputWidth(which) || !std::isfinite(value))
        return;
    if (m(row, col) == value) return;
    m(row, col) = value;
    m_preset = Preset::Edited;
    recompute();
}

void PlaygroundModel::setTokens(const QStringList& tokens) {
    bool any = false;
    for (int i = 0; i < std::min<int>(static_cast<int>(tokens.size()), m_n); ++i) {
        const QString token = tokens[i].trimmed().isEmpty() ? defaultToken(i) : tokens[i].trimmed();
        if (token == m_tokenStore[i]) continue;
        m_tokenStore[i] = token;
        any = true;
    }
    if (any) emit changed();
}

// --- mask ------------------------------------------------------------------------------------

void PlaygroundModel::setMaskMode(MaskMode mode) {
    if (mode == m_maskMode) return;
    if (mode == MaskMode::Custom && m_maskMode != MaskMode::None)
        m_customMask.topLeftCorner(m_n, m_n) = effectiveMask();
    m_maskMode = mode;
    recompute();
}

void PlaygroundModel::setPaddingCount(int count) {
    const int n = sequenceLength();
    count = n > 1 ? std::clamp(count, 1, n - 1) : 0;
    if (count == m_padding) return;
    m_padding = count;
    if (m_maskMode == MaskMode::Padding) recompute();
}

void PlaygroundModel::toggleMaskCell(int query, int key) {
    const int n = sequenceLength();
    if (query < 0 || query >= n || key < 0 || key >= n) return;
    if (m_maskMode != MaskMode::Custom) {
        m_customMask.topLeftCorner(n, n) = effectiveMask();
        m_maskMode = MaskMode::Custom;
    }
    m_customMask(query, key) = m_customMask(query, key) == 0.0f ? 1.0f : 0.0f;
    recompute();
}

void PlaygroundModel::setCustomMask(const RowMatrix& keep) {
    if (keep.rows() != sequenceLength() || keep.cols() != sequenceLength()) return;
    m_customMask.topLeftCorner(m_n, m_n) = keep.unaryExpr([](float v) { return v == 0.0f ? 0.0f : 1.0f; });
    m_maskMode = MaskMode::Custom;
    recompute();
}

// --- focus -----------------------------------------------------------------------------------

void PlaygroundModel::setSelectedHead(int head) {
    head = std::clamp(head, 0, m_heads - 1);
    if (head == m_head) return;
    m_head = head;
    emit focusChanged();
}

void PlaygroundModel::setFocus(int query, int key) {
    query = std::clamp(query, 0, sequenceLength() - 1);
    key = std::clamp(key, 0, sequenceLength() - 1);
    if (query == m_focusQuery && key == m_focusKey) return;
    m_focusQuery = query;
    m_focusKey = key;
    emit focusChanged();
}

void PlaygroundModel::recompute() {
    const Tensor q = Tensor::fromMatrix(input(Input::Query)); // [n, d_model]
    const Tensor k = Tensor::fromMatrix(input(Input::Key));   // [n, d_model]
    const Tensor v = Tensor::fromMatrix(input(Input::Value)); // [n, d_model]
    const Tensor mask = Tensor::fromMatrix(effectiveMask());  // [n, n]
    // The setters keep every shape valid, so an Error here is a bug: say so instead of unwinding
    // through Qt's signal machinery.
    try {
        m_result = multiHeadAttention(q, k, v, m_maskMode == MaskMode::None ? nullptr : &mask, m_heads, true);
        m_projected = output() * m_wo.topLeftCorner(m_dValue, m_dValue);
    } catch (const Error& e) {
        qWarning() << "PlaygroundModel: attention failed:" << e.what();
    }
    emit changed();
}

} // namespace attnlens::ui
