#include "ui/translate/translation_document.h"

#include "core/util/error.h"
#include "ui/render/string_lists.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>

namespace attnlens::ui {

namespace {

// Applies hiding and word merging to a matrix whose rows/columns carry `rowPieces` / `colPieces`.
void finishMatrix(AttentionMatrix& m, const RowMatrix& raw, const std::vector<std::string>& rowPieces,
                  const std::vector<std::string>& colPieces, bool hideSpecial, bool wordLevel,
                  bool rowsAreTokens) {
    std::vector<char> keepR(rowPieces.size(), 1), keepC(colPieces.size(), 1);
    if (hideSpecial) {
        for (size_t i = 0; i < rowPieces.size(); ++i)
            keepR[i] = rowsAreTokens ? !isSpecialPiece(rowPieces[i]) : 1;
        for (size_t i = 0; i < colPieces.size(); ++i)
            keepC[i] = !isSpecialPiece(colPieces[i]);
    }
    RowMatrix v = hideSpecial ? dropTokens(raw, keepR, keepC, true) : raw;
    std::vector<int> keptR, keptC; // kept piece indices in order
    for (size_t i = 0; i < keepR.size(); ++i)
        if (keepR[i]) keptR.push_back(static_cast<int>(i));
    for (size_t i = 0; i < keepC.size(); ++i)
        if (keepC[i]) keptC.push_back(static_cast<int>(i));
    std::vector<std::string> rowKept, colKept;
    for (int i : keptR)
        rowKept.push_back(rowPieces[static_cast<size_t>(i)]);
    for (int i : keptC)
        colKept.push_back(colPieces[static_cast<size_t>(i)]);

    auto identity = [](const std::vector<std::string>& pieces) {
        WordGroups g;
        for (size_t i = 0; i < pieces.size(); ++i) {
            g.wordOf.push_back(static_cast<int>(i));
            g.firstPiece.push_back(static_cast<int>(i));
            g.words.push_back(pieces[i]);
        }
        return g;
    };
    const WordGroups rg = (wordLevel && rowsAreTokens) ? groupPieces(rowKept) : identity(rowKept);
    const WordGroups cg = wordLevel ? groupPieces(colKept) : identity(colKept);
    if (wordLevel) v = mergeToWords(v, rg, cg);
    m.values = std::move(v);
    m.rowLabels = toQStringList(rg.words);
    m.columnLabels = toQStringList(cg.words);
    m.rowOfPiece.assign(rowPieces.size(), -1);
    m.columnOfPiece.assign(colPieces.size(), -1);
    for (size_t k = 0; k < keptR.size(); ++k)
        m.rowOfPiece[static_cast<size_t>(keptR[k])] = rg.wordOf[k];
    for (size_t k = 0; k < keptC.size(); ++k)
        m.columnOfPiece[static_cast<size_t>(keptC[k])] = cg.wordOf[k];
    for (int f : rg.firstPiece)
        m.rowFirstPiece.push_back(keptR[static_cast<size_t>(f)]);
    for (int f : cg.firstPiece)
        m.columnFirstPiece.push_back(keptC[static_cast<size_t>(f)]);
}

} // namespace

QString attentionKindName(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::EncoderSelf:
        return QObject::tr("Encoder self-attention");
    case AttentionKind::DecoderSelf:
        return QObject::tr("Decoder self-attention");
    case AttentionKind::Cross:
        return QObject::tr("Cross-attention");
    }
    return {};
}

std::shared_ptr<const TranslationSnapshot>
makeSnapshot(const DecodeSession& session, const MarianModel& model, const MarianTokenizer& tokenizer) {
    auto s = std::make_shared<TranslationSnapshot>();
    s->best = session.trace();
    s->nodes = session.nodes();
    s->liveBeams = session.liveBeams();
    s->finishedHypotheses = session.finishedHypotheses();
    s->bestNode = session.bestNode();
    s->step = session.stepCount();
    s->maxNewTokens = session.maxNewTokens();
    s->numBeams = session.numBeams();
    s->finished = session.finished();
    s->candidates = session.currentCandidates();
    s->sourceEmbedding = model.embeddingParts(session.source().ids, MarianSide::Encoder);
    // Decoder inputs: the start token, then every generated token (the newest is the next input).
    std::vector<int> inputs{model.config().decoderStartTokenId};
    inputs.insert(inputs.end(), s->best->targetIds.begin(), s->best->targetIds.end());
    inputs.resize(std::min<size_t>(inputs.size(), static_cast<size_t>(model.config().maxPositions)));
    s->targetEmbedding = model.embeddingParts(inputs, MarianSide::Decoder);
    for (int id : inputs)
        s->targetInputTokens << QString::fromStdString(tokenizer.idToPiece(id));
    return s;
}

std::shared_ptr<const TranslationTrace> traceForNode(const TranslationSnapshot& snapshot, int node,
                                                     const MarianTokenizer& tokenizer) {
    const auto& nodes = snapshot.nodes;
    if (node <= 0 || node >= static_cast<int>(nodes.size()) || nodes[static_cast<size_t>(node)].id != node)
        throw Error("beam tree: no node " + std::to_string(node));
    std::vector<int> path;
    for (int n = node; n > 0; n = nodes[static_cast<size_t>(n)].parent)
        path.push_back(n);
    std::reverse(path.begin(), path.end());
    const BeamNode& last = nodes[static_cast<size_t>(node)];
    auto trace = std::make_shared<TranslationTrace>();
    const TranslationTrace& best = *snapshot.best;
    trace->source = best.source;
    trace->sourceTokens = best.sourceTokens;
    trace->sourceIds = best.sourceIds;
    trace->encoderAttention = best.encoderAttention;
    trace->encoderValueNorms = best.encoderValueNorms;
    trace->crossValueNorms = best.crossValueNorms;
    fillHypothesis(*trace, nodes, path, &tokenizer);
    trace->translation = tokenizer.decode(trace->targetIds);
    trace->finished = last.finished;
    trace->score = last.finished ? last.finalScore : last.score;
    return trace;
}

// --- AttentionMatrix ---------------------------------------------------------------------------

int AttentionMatrix::rowOf(const TokenRef& token) const {
    if (!token.isValid() || token.side != rowSide || token.index >= static_cast<int>(rowOfPiece.size()))
        return -1;
    return rowOfPiece[static_cast<size_t>(token.index)];
}

int AttentionMatrix::columnOf(const TokenRef& token) const {
    if (!token.isValid() || token.side != columnSide) return -1;
    const int piece = token.index + (columnsAreDecoderInputs ? 1 : 0);
    if (piece >= static_cast<int>(columnOfPiece.size())) return -1;
    return columnOfPiece[static_cast<size_t>(piece)];
}

TokenRef AttentionMatrix::tokenOfRow(int row) const {
    if (row < 0 || row >= static_cast<int>(rowFirstPiece.size())) return {};
    return {rowSide, rowFirstPiece[static_cast<size_t>(row)]};
}

TokenRef AttentionMatrix::tokenOfColumn(int col) const {
    if (col < 0 || col >= static_cast<int>(columnFirstPiece.size())) return {};
    const int piece = columnFirstPiece[static_cast<size_t>(col)] - (columnsAreDecoderInputs ? 1 : 0);
    if (piece < 0) return {};
    return {columnSide, piece};
}

// --- TranslationDocument -------------------------------------------------------------------------

TranslationDocument::TranslationDocument(QObject* parent) : QObject(parent) {}

void TranslationDocument::setModel(MarianFolder model, const QString& dir) {
    m_model = std::move(model);
    m_modelDir = dir;
    m_snapshot.reset();
    m_trace.reset();
    m_beamNode = -1;
    m_finalTokens.clear();
    m_finalSource.clear();
    m_selected = m_hovered = {};
    clampSelection();
    emit modelChanged();
    emit snapshotChanged();
    emit selectionChanged();
}

QString TranslationDocument::modelDescription() const {
    if (!hasModel()) return tr("no model");
    const auto& c = m_model.model->config();
    return tr("%1 · %2M parameters · %3+%4 layers × %5 heads")
        .arg(QFileInfo(m_modelDir).fileName())
        .arg(double(m_model.model->parameterCount()) / 1e6, 0, 'f', 1)
        .arg(c.encoderLayers)
        .arg(c.decoderLayers)
        .arg(c.decoderHeads);
}

void TranslationDocument::setSnapshot(std::shared_ptr<const TranslationSnapshot> snapshot) {
    m_snapshot = std::move(snapshot);
    if (m_snapshot && m_snapshot->best) {
        const TranslationTrace& best = *m_snapshot->best;
        if (best.sourceTokens != m_finalSource || m_snapshot->numBeams != m_finalBeams) {
            m_finalTokens.clear(); // another search
            m_finalSource = best.sourceTokens;
            m_finalBeams = m_snapshot->numBeams;
        }
        if (m_snapshot->finished) m_finalTokens = best.targetTokens;
    }
    if (m_snapshot && (m_beamNode >= static_cast<int>(m_snapshot->nodes.size()))) m_beamNode = -1;
    updateTrace();
    clampSelection();
    emit snapshotChanged();
    emit selectionChanged();
}

void TranslationDocument::clearSnapshot() {
    m_snapshot.reset();
    m_trace.reset();
    m_beamNode = -1;
    m_finalTokens.clear();
    m_finalSource.clear();
    emit snapshotChanged();
    emit selectionChanged();
}

void TranslationDocument::updateTrace() {
    if (!m_snapshot) {
        m_trace.reset();
        return;
    }
    if (m_beamNode > 0 && m_model.tokenizer)
        m_trace = traceForNode(*m_snapshot, m_beamNode, *m_model.tokenizer);
    else
        m_trace = m_snapshot->best;
}

int TranslationDocument::layerCount(AttentionKind kind) const {
    if (!hasModel()) return 0;
    const auto& c = m_model.model->config();
    return kind == AttentionKind::EncoderSelf ? c.encoderLayers : c.decoderLayers;
}

int TranslationDocument::headCount(AttentionKind kind) const {
    if (!hasModel()) return 0;
    const auto& c = m_model.model->config();
    return kind == AttentionKind::EncoderSelf ? c.encoderHeads : c.decoderHeads;
}

void TranslationDocument::clampSelection() {
    m_selection.layer = clampLayer(m_selection.layer, layerCount(m_kind));
    m_selection.heads.head = clampHead(m_selection.heads.head, headCount(m_kind));
    auto valid = [this](TokenRef t) {
        return t.isValid() && t.index < static_cast<int>(tokens(t.side).size());
    };
    if (!valid(m_selected)) m_selected = {};
    if (!valid(m_hovered)) m_hovered = {};
}

void TranslationDocument::setKind(AttentionKind kind) {
    if (kind == m_kind) return;
    m_kind = kind;
    clampSelection();
    emit selectionChanged();
}

void TranslationDocument::setLayer(int layer) {
    if (m_selection.setLayer(layer, layerCount(m_kind))) emit selectionChanged();
}

void TranslationDocument::setHead(int head) {
    if (!m_selection.setHead(head, headCount(m_kind))) return;
    if (m_selection.heads.head >= 0) m_through = Through::Layer; // one head is one layer's
    emit selectionChanged();
}

void TranslationDocument::setFusion(HeadFusion fusion) {
    if (m_selection.setFusion(fusion)) emit selectionChanged();
}

void TranslationDocument::setSelectedToken(TokenRef token) {
    if (token == m_selected) return;
    m_selected = token;
    emit selectionChanged();
}

void TranslationDocument::setHoveredToken(TokenRef token) {
    if (token == m_hovered) return;
    m_hovered = token;
    emit hoverChanged();
}

void TranslationDocument::setWordLevel(bool on) {
    if (on == m_wordLevel) return;
    m_wordLevel = on;
    emit selectionChanged();
}

void TranslationDocument::setHideSpecial(bool on) {
    if (on == m_hideSpecial) return;
    m_hideSpecial = on;
    emit selectionChanged();
}

void TranslationDocument::setSelectedBeamNode(int node) {
    if (!m_snapshot || node <= 0 || node >= static_cast<int>(m_snapshot->nodes.size())) node = -1;
    if (node == m_beamNode) return;
    m_beamNode = node;
    updateTrace();
    clampSelection();
    emit snapshotChanged();
    emit selectionChanged();
}

void TranslationDocument::setThrough(Through through) {
    if (through == m_through) return;
    m_through = through;
    if (through != Through::Layer) m_selection.heads.head = -1; // through layers: heads fused
    emit selectionChanged();
}

bool TranslationDocument::flowPending() const {
    if (m_kind != AttentionKind::EncoderSelf || m_through != Through::Flow || !m_trace) return false;
    return !(m_flowKey == flowKey()) || m_flow.rows() != static_cast<Eigen::Index>(m_trace->sourceIds.size());
}

void TranslationDocument::setFlowMatrix(FlowKey key, RowMatrix flow) {
    if (!(key == flowKey())) return; // computed for a translation or layer no longer shown
    m_flowKey = key;
    m_flow = std::move(flow);
    m_flowTrace = m_trace;
    emit selectionChanged();
}

Tensor TranslationDocument::attentionTensor(AttentionKind kind) const {
    return m_trace ? traceAttention(*m_trace, kind) : Tensor();
}

Tensor TranslationDocument::shownTensor(AttentionKind kind) const {
    if (!valueWeighted()) return attentionTensor(kind);
    if (m_weightedTrace != m_trace) {
        m_weightedTrace = m_trace;
        for (Tensor& t : m_weighted)
            t = Tensor();
    }
    Tensor& weighted = m_weighted[static_cast<int>(kind)];
    if (weighted.empty()) weighted = traceValueWeighted(*m_trace, kind);
    return weighted;
}

void TranslationDocument::setValueWeighted(bool on) {
    if (on == m_valueWeighted) return;
    m_valueWeighted = on;
    emit selectionChanged();
}

QStringList TranslationDocument::tokens(TokenSide side) const {
    if (!m_trace) return {};
    return toQStringList(side == TokenSide::Source ? m_trace->sourceTokens : m_trace->targetTokens);
}

AttentionMatrix TranslationDocument::matrix(AttentionKind kind, int layer, int head) const {
    AttentionMatrix m;
    const Tensor t = attentionTensor(kind); // [L, H, Q, K] (rollout and flow: the weights)
    if (t.rank() != 4 || t.dim(2) == 0 || t.dim(3) == 0) return m;
    if (layer < 0 || layer >= t.dim(0) || head >= t.dim(1)) return m;
    RowMatrix raw;
    if (kind == AttentionKind::EncoderSelf && m_through == Through::Rollout) {
        const FlowKey key{encoderStorage(), layer, m_selection.heads.fusion};
        if (!(key == m_rolloutKey) || m_rollout.rows() != t.dim(2)) {
            RolloutOptions o;
            o.fusion = m_selection.heads.fusion;
            o.lastLayer = layer;
            m_rollout = attentionRollout(t, o);
            m_rolloutKey = key;
            m_rolloutTrace = m_trace;
        }
        raw = m_rollout;
    } else if (kind == AttentionKind::EncoderSelf && m_through == Through::Flow) {
        if (!(m_flowKey == FlowKey{encoderStorage(), layer, m_selection.heads.fusion}) ||
            m_flow.rows() != t.dim(2))
            return m; // pending
        raw = m_flow;
    } else {
        const Tensor shown = shownTensor(kind);
        raw = head >= 0 ? RowMatrix(shown.slice2d({layer, head}))
                        : layerAttention(shown, layer, {-1, m_selection.heads.fusion});
    }
    m.rowSide = kind == AttentionKind::EncoderSelf ? TokenSide::Source : TokenSide::Target;
    m.columnSide = kind == AttentionKind::DecoderSelf ? TokenSide::Target : TokenSide::Source;
    m.columnsAreDecoderInputs = kind == AttentionKind::DecoderSelf;
    const TraceAxes axes = traceAxes(*m_trace, kind, decoderStartPiece(m_model));
    finishMatrix(m, raw, axes.rows, axes.columns, m_hideSpecial, m_wordLevel, true);
    return m;
}

AttentionMatrix TranslationDocument::newestCrossAttention(int layer) const {
    AttentionMatrix m;
    const Tensor t = shownTensor(AttentionKind::Cross); // [L, H, T, S]
    if (t.rank() != 4 || t.dim(2) == 0 || layer < 0 || layer >= t.dim(0)) return m;
    const int64_t H = t.dim(1), T = t.dim(2), S = t.dim(3);
    RowMatrix raw(H + 1, S); // [heads + mean, S]
    for (int64_t h = 0; h < H; ++h)
        raw.row(h) = t.slice2d({layer, h}).row(T - 1);
    raw.row(H) = raw.topRows(H).colwise().mean();
    std::vector<std::string> rowNames;
    for (int64_t h = 0; h < H; ++h)
        rowNames.push_back(tr("head %1").arg(h).toStdString());
    rowNames.push_back(tr("mean").toStdString());
    m.rowSide = TokenSide::Target;
    m.columnSide = TokenSide::Source;
    finishMatrix(m, raw, rowNames, m_trace->sourceTokens, m_hideSpecial, m_wordLevel, false);
    m.rowOfPiece.clear();
    m.rowFirstPiece.clear();
    return m;
}

std::vector<float> TranslationDocument::focusWeights(TokenSide side) const {
    const TokenRef focus = focusToken();
    if (!focus.isValid()) return {};
    const AttentionMatrix m = currentMatrix();
    if (m.empty()) return {};
    const int n = static_cast<int>(tokens(side).size());
    std::vector<float> w(static_cast<size_t>(n), 0.0f);
    const int row = m.rowOf(focus);
    if (row >= 0 && side == m.columnSide) {
        for (int i = 0; i < n; ++i) {
            const int c = m.columnOf({side, i});
            if (c >= 0) w[static_cast<size_t>(i)] = m.values(row, c);
        }
        return w;
    }
    const int col = m.columnOf(focus);
    if (col >= 0 && side == m.rowSide) {
        for (int i = 0; i < n; ++i) {
            const int r = m.rowOf({side, i});
            if (r >= 0) w[static_cast<size_t>(i)] = m.values(r, col);
        }
        return w;
    }
    return {};
}

} // namespace attnlens::ui
