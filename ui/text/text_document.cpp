#include "ui/text/text_document.h"

#include "core/analysis/value_weighting.h"
#include "core/analysis/word_merge.h"
#include "core/models/text_generation.h"
#include "core/util/error.h"
#include "ui/render/string_lists.h"

#include <QFileInfo>

#include <algorithm>

namespace attnlens::ui {

namespace {

constexpr int kCandidates = 10;

} // namespace

TextDocument::TextDocument(QObject* parent) : QObject(parent) {}

std::shared_ptr<const TextRun> TextDocument::makeRun(const TextFolder& folder, const std::string& text,
                                                     TextCache* cache, const Callbacks& callbacks,
                                                     const HeadList& offHeads, const Sampling& sampling,
                                                     bool chat, int64_t captureBudget) {
    auto run = std::make_shared<TextRun>();
    run->sampling = sampling;
    const TextEncoding e = folder.encode(text, chat);
    if (e.ids.empty()) throw Error("the text has no tokens");
    if (static_cast<int>(e.ids.size()) > folder.maxPositions())
        throw Error("the text is too long: " + std::to_string(e.ids.size()) + " tokens, the model has " +
                    std::to_string(folder.maxPositions()) + " positions");
    callbacks.checkCancel();
    run->tokens = e.tokens;
    run->ids = e.ids;
    for (int id : e.ids)
        run->texts.push_back(folder.tokenText(id));
    run->promptLength = static_cast<int>(e.ids.size());
    run->offHeads = offHeads;
    RunControls controls;
    controls.offHeads = offHeads;
    controls.callbacks = &callbacks;
    controls.captureBudget = captureBudget;
    if (folder.decoderOnly()) {
        *cache = folder.model->newCache();
        const TextForward f = folder.model->extend(e.ids, *cache, true, true, controls);
        run->prompt = f.attentionStore();
        run->candidates.push_back(topCandidates(f.logits.data(), f.logits.cols(), kCandidates));
        run->lastLogits = f.logits;
        run->valueNorms = cacheValueNorms(*folder.model, *cache);
    } else {
        ResidualTrace trace; // one row kept; each layer's value norms over every key
        trace.rows = {0};
        trace.values = true;
        controls.trace = &trace;
        const TextForward f = folder.forward(e.ids, folder.hasLmHead(), controls);
        for (LayerTrace& layer : trace.layers)
            run->valueNorms.push_back(std::move(layer.valueNorms));
        run->prompt = f.attentionStore();
        if (folder.hasLmHead())
            for (int position : folder.maskPositions(e.ids))
                run->maskPredictions.emplace_back(
                    position,
                    topCandidates(f.logits.data() + int64_t(position) * f.logits.cols(), f.logits.cols(), 5));
    }
    return run;
}

std::shared_ptr<const TextRun> TextDocument::extendRun(const TextFolder& folder, const TextRun& previous,
                                                       int count, TextCache& cache,
                                                       const Callbacks& callbacks) {
    if (!folder.decoderOnly()) throw Error("only decoder-only models generate");
    auto run = std::make_shared<TextRun>(previous);
    callbacks.checkCancel();
    if (run->generated() > 0 && folder.isEndOfText(run->ids.back())) return run; // the text has ended
    RunControls controls;
    controls.offHeads = previous.offHeads;
    controls.callbacks = &callbacks;
    int made = 0;
    sampleContinuation(folder, previous.lastLogits, cache, count, previous.sampling, controls,
                       [&](const TextStep& step) {
                           run->ids.push_back(step.id);
                           run->tokens.push_back(folder.token(step.id));
                           run->texts.push_back(folder.tokenText(step.id));
                           run->stepAttention.push_back(step.forward.attentions);
                           run->candidates.push_back(topCandidates(step.forward.logits.data(),
                                                                   step.forward.logits.cols(), kCandidates));
                           run->lastLogits = step.forward.logits;
                           ++made;
                           callbacks.report(double(made) / count,
                                            "token " + std::to_string(made) + " of " + std::to_string(count));
                       });
    run->valueNorms = cacheValueNorms(*folder.model, cache);
    return run;
}

void TextDocument::setModel(std::shared_ptr<const TextFolder> folder) {
    m_folder = std::move(folder);
    m_run.reset();
    m_maps.clear();
    m_step = 0;
    m_selection.layer = std::max(0, m_folder ? m_folder->layers() - 1 : 0);
    m_selection.heads.head = -1;
    m_selected = -1;
    emit modelChanged();
    emit runChanged();
}

QString TextDocument::modelDescription() const {
    if (!m_folder) return tr("no model");
    QString text = tr("%1 · %2 · %3 layers × %4 heads")
                       .arg(QFileInfo(QString::fromStdString(m_folder->dir.string())).fileName(),
                            QString::fromStdString(m_folder->modelType))
                       .arg(m_folder->layers())
                       .arg(m_folder->heads());
    // Grouped-query attention: the key/value heads the query heads share.
    if (const int kv = m_folder->model->kvHeads(); kv != m_folder->heads()) text += tr(" / %1 KV").arg(kv);
    return text;
}

QString TextDocument::headTitle(int layer, int head) const {
    const int kv = m_folder ? keyValueHeadOf(head, m_folder->heads(), m_folder->model->kvHeads()) : -1;
    return kv < 0 ? tr("L%1 H%2").arg(layer).arg(head) : tr("L%1 H%2 · KV%3").arg(layer).arg(head).arg(kv);
}

QString TextDocument::modelDetails() const {
    if (!m_folder) return {};
    QString text = modelDescription();
    if (const int kv = m_folder->model->kvHeads(); kv != m_folder->heads())
        text += "\n" + tr("Grouped-query attention: %1 key/value heads, each read by %2 query heads in order "
                          "(query head h reads KV head h / %2)")
                           .arg(kv)
                           .arg(m_folder->heads() / kv);
    int windowed = 0, window = 0;
    for (int l = 0; l < m_folder->layers(); ++l)
        if (const int w = m_folder->model->slidingWindow(l); w > 0) ++windowed, window = w;
    if (windowed > 0)
        text += "\n" + tr("Sliding window of %1 tokens in %2 of %3 layers (a query sees its %1 latest keys)")
                           .arg(window)
                           .arg(windowed)
                           .arg(m_folder->layers());
    return text;
}

void TextDocument::setRun(std::shared_ptr<const TextRun> run) {
    m_run = std::move(run);
    m_maps.clear();
    m_step = m_run ? m_run->generated() : 0;
    if (m_selected >= visibleTokens()) m_selected = -1;
    emit runChanged();
}

int TextDocument::visibleTokens() const {
    return m_run ? m_run->promptLength + m_step : 0;
}

void TextDocument::setStep(int step) {
    step = std::clamp(step, 0, m_run ? m_run->generated() : 0);
    if (step == m_step) return;
    m_step = step;
    if (m_selected >= visibleTokens()) m_selected = -1;
    emit selectionChanged();
}

void TextDocument::setLayer(int layer) {
    if (m_selection.setLayer(layer, m_folder ? m_folder->layers() : 0)) emit selectionChanged();
}

void TextDocument::setHead(int head) {
    if (m_selection.setHead(head, m_folder ? m_folder->heads() : 0)) emit selectionChanged();
}

void TextDocument::setFusion(HeadFusion fusion) {
    if (m_selection.setFusion(fusion)) emit selectionChanged();
}

void TextDocument::setSelectedToken(int row) {
    if (row == m_selected) return;
    m_selected = row;
    emit selectionChanged();
}

void TextDocument::setHoveredToken(int row) {
    if (row == m_hovered) return;
    m_hovered = row;
    emit hoverChanged();
}

void TextDocument::setWordLevel(bool on) {
    if (on == m_wordLevel) return;
    m_wordLevel = on;
    m_selected = -1;
    emit selectionChanged();
}

void TextDocument::setValueWeighted(bool on) {
    if (on == m_valueWeighted) return;
    m_valueWeighted = on;
    emit selectionChanged();
}

void TextDocument::setHideSpecial(bool on) {
    if (on == m_hideSpecial) return;
    m_hideSpecial = on;
    m_selected = -1;
    emit selectionChanged();
}

RowMatrix TextDocument::visibleHead(const TextRun& run, int visible, int layer, int head, bool weighted) {
    const int p = run.promptLength;
    RowMatrix out(visible, visible);
    if (visible == p) { // headInto writes every cell
        run.prompt->headInto(layer, head, out.data());
    } else {
        out.setZero();
        out.topLeftCorner(p, p) = run.prompt->head(layer, head);
        for (int s = 0; p + s < visible; ++s)
            out.block(p + s, 0, 1, p + s + 1) =
                run.stepAttention[static_cast<size_t>(s)].slice2d({layer, head});
    }
    if (weighted && size_t(layer) < run.valueNorms.size())
        valueWeightRows(out, run.valueNorms[size_t(layer)].row(head).leftCols(visible));
    return out;
}

RowMatrix TextDocument::makeMap(const TextRun& run, int heads, int visible, int layer, int key,
                                bool weighted) {
    if (key >= 0) return visibleHead(run, visible, layer, key, weighted);
    // fused one head at a time (key = −1 − the fusion), each weighted first
    return fuseHeads(heads, static_cast<HeadFusion>(-1 - key),
                     [&](int h) { return visibleHead(run, visible, layer, h, weighted); });
}

const RowMatrix& TextDocument::cachedHead(int layer, int head) const {
    const int visible = visibleTokens();
    const bool weighted = valueWeighted();
    for (const CachedMap& c : m_maps)
        if (c.layer == layer && c.head == head && c.visible == visible && c.weighted == weighted)
            return c.map;
    constexpr size_t kKept = 4; // a few maps of a long text (64 MB each at 4 096 tokens)
    if (m_maps.size() >= kKept) m_maps.erase(m_maps.begin());
    m_maps.push_back(
        {layer, head, visible, weighted, makeMap(*m_run, m_folder->heads(), visible, layer, head, weighted)});
    return m_maps.back().map;
}

RowMatrix TextDocument::tokenMatrix(int layer, int head) const {
    if (!m_run || !m_folder) return {};
    const int key = head >= 0 ? head : -1 - static_cast<int>(m_selection.heads.fusion);
    return onDemand() ? cachedHead(layer, key)
                      : makeMap(*m_run, m_folder->heads(), visibleTokens(), layer, key, valueWeighted());
}

Tensor TextDocument::visibleAttention() const {
    if (!m_run || !m_folder) return {};
    const int64_t layers = m_folder->layers(), heads = m_folder->heads(), n = visibleTokens();
    if (onDemand())
        throw Error("every head of " + std::to_string(n) + " tokens would take " +
                    std::to_string(capturedAttentionBytes(layers, heads, n, n) >> 20) +
                    " MB: this run keeps its attention on demand (export one head at a time)");
    Tensor out({layers, heads, n, n});
    for (int64_t l = 0; l < layers; ++l)
        for (int64_t h = 0; h < heads; ++h)
            out.slice2d({l, h}) = visibleHead(*m_run, int(n), int(l), int(h));
    return out;
}

AttentionCapture TextDocument::visibleCapture() const {
    if (!m_run || !m_folder) return {};
    const std::vector<int> ids(m_run->ids.begin(), m_run->ids.begin() + visibleTokens());
    if (!onDemand()) return textCapture(*m_folder, ids, visibleAttention());
    return textCapture(*m_folder, ids, [run = m_run, visible = visibleTokens()](int l, int h, float* out) {
        Eigen::Map<RowMatrix>(out, visible, visible) = visibleHead(*run, visible, l, h);
    });
}

QStringList TextDocument::visibleTokenLabels() const {
    return m_run ? tokenLabels(*m_run, *m_folder, visibleTokens()) : QStringList();
}

QStringList TextDocument::tokenLabels(const TextRun& run, const TextFolder& folder, int visible) {
    QStringList labels;
    for (int i = 0; i < visible; ++i) {
        const std::string& t = run.tokens[static_cast<size_t>(i)];
        if (folder.piecesEndWords() && !isSpecialPiece(t) && t.ends_with("</w>"))
            labels << QString::fromStdString(t.substr(0, t.size() - 4)); // CLIP: "cat</w>" → cat
        else
            labels << (isSpecialPiece(t) || !folder.piecesCarrySpaces()
                           ? QString::fromStdString(t)
                           : QString::fromStdString(run.texts[static_cast<size_t>(i)])
                                 .replace(' ', QChar(0x2423)));
    }
    return labels;
}

TextDocument::Shown TextDocument::shown(int layer, int head) const {
    if (!m_run || !m_folder) return {};
    return shape(tokenMatrix(layer, head), *m_run, *m_folder, showOptions());
}

TextDocument::Shown TextDocument::shape(RowMatrix m, const TextRun& run, const TextFolder& folder,
                                        const ShowOptions& o) {
    Shown s;
    if (m.size() == 0) return s;
    s.rows = s.columns = shapeTokens(&m, run, folder, o);
    s.values = std::move(m);
    return s;
}

QStringList TextDocument::shownLabels(const TextRun& run, const TextFolder& folder, const ShowOptions& o) {
    return shapeTokens(nullptr, run, folder, o);
}

// The labels as shown; `m` (may be null), [visible, visible], made to match them.
QStringList TextDocument::shapeTokens(RowMatrix* m, const TextRun& run, const TextFolder& folder,
                                      const ShowOptions& o) {
    const int n = o.visible;
    std::vector<std::string> tokens(run.tokens.begin(), run.tokens.begin() + n);
    std::vector<std::string> texts(run.texts.begin(), run.texts.begin() + n);
    QStringList labels = tokenLabels(run, folder, n);
    if (o.hideSpecial) {
        std::vector<char> keep(static_cast<size_t>(n));
        // The attention sinks ([CLS], [SEP], [PAD], <|endoftext|>); [MASK] and [UNK] stand for words and
        // stay.
        for (int i = 0; i < n; ++i) {
            const std::string& t = tokens[static_cast<size_t>(i)];
            keep[static_cast<size_t>(i)] = !(isSpecialPiece(t) && t != "[MASK]" && t != "[UNK]");
        }
        if (std::count(keep.begin(), keep.end(), 1) > 0) {
            if (m) *m = dropTokens(*m, keep, keep, true);
            std::vector<std::string> t2, x2;
            QStringList l2;
            for (int i = 0; i < n; ++i)
                if (keep[static_cast<size_t>(i)])
                    t2.push_back(tokens[static_cast<size_t>(i)]), x2.push_back(texts[static_cast<size_t>(i)]),
                        l2 << labels[i];
            tokens = std::move(t2), texts = std::move(x2), labels = std::move(l2);
        }
    }
    if (o.wordLevel) {
        const WordGroups g = folder.piecesCarrySpaces() ? groupByteBpe(tokens, texts)
                             : folder.piecesEndWords()  ? groupEndOfWord(tokens)
                                                        : groupWordPieces(tokens);
        if (m) *m = mergeToWords(*m, g, g);
        labels = toQStringList(g.words);
    }
    return labels;
}

std::vector<TextCandidate> TextDocument::stepCandidates() const {
    if (!m_run || m_run->candidates.empty()) return {};
    const int index = m_step;
    return m_run->candidates[static_cast<size_t>(
        std::min<int>(index, static_cast<int>(m_run->candidates.size()) - 1))];
}

} // namespace attnlens::ui
