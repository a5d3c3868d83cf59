// The Translate page's neuron view (issue 21, M18): one attention score of the shown kind taken apart, for
// the cell right-clicked in the matrix (or the focus token), with every layer, head and token of the
// translation on screen selectable in the window.
#include "core/decode/trace_attention.h"
#include "core/models/marian_folder.h"
#include "ui/render/string_lists.h"
#include "ui/translate/matrix_view.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"
#include "ui/widgets/neuron_dialog.h"

#include <cmath>

namespace attnlens::ui {

namespace {

QString kindTitle(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::EncoderSelf:
        return QObject::tr("encoder self-attention");
    case AttentionKind::DecoderSelf:
        return QObject::tr("decoder self-attention (masked)");
    case AttentionKind::Cross:
        return QObject::tr("cross-attention");
    }
    return {};
}

} // namespace

void TranslatePage::showNeuronView(int row, int col) {
    const auto trace = m_doc->trace();
    const MarianFolder folder = m_doc->model();
    if (!trace || !folder.model || trace->targetIds.empty()) {
        showStatus(tr("Translate something first: the neuron view takes one score of the translation apart."),
                   true);
        return;
    }
    const AttentionMatrix matrix = m_doc->currentMatrix();
    // Displayed row / column → the captured matrix's piece indices (word merging and hidden tokens change
    // them).
    int query = -1, key = -1;
    if (row >= 0 && row < static_cast<int>(matrix.rowFirstPiece.size()))
        query = matrix.rowFirstPiece[size_t(row)];
    if (col >= 0 && col < static_cast<int>(matrix.columnFirstPiece.size()))
        key = matrix.columnFirstPiece[size_t(col)];
    if (query < 0) {
        const TokenRef focus = m_doc->focusToken();
        query = focus.isValid() && focus.side == matrix.rowSide ? focus.index : 0;
    }
    openNeuronView(m_doc->layer(), std::max(0, m_doc->head()), query, key);
}

void TranslatePage::openNeuronView(int layer, int head, int query, int key) {
    const auto trace = m_doc->trace();
    const MarianFolder folder = m_doc->model();
    if (!trace || !folder.model || trace->targetIds.empty()) return;
    const AttentionKind kind = m_doc->kind();
    const TraceAxes axes = traceAxes(*trace, kind, decoderStartPiece(folder));
    NeuronSource source;
    source.title = tr("Translate — %1").arg(kindTitle(kind));
    source.layers = m_doc->layerCount(kind);
    source.heads = [heads = m_doc->headCount(kind)](int) { return heads; };
    source.queryLabels = [rows = toQStringList(axes.rows)](int) { return rows; };
    source.keyLabels = [columns = toQStringList(axes.columns)](int) { return columns; };
    source.captured = [trace, kind](int l, int h, int q, int k) {
        const Tensor& t = traceAttention(*trace, kind); // [L, H, Q, K]
        if (l >= t.dim(0) || h >= t.dim(1) || q >= t.dim(2) || k >= t.dim(3)) return NAN;
        return t.at({l, h, q, k});
    };
    source.inputs = [model = folder.model, trace, kind, ablation = m_ablation](int l, const Callbacks& cb) {
        cb.checkCancel();
        return traceAttentionInputs(*model, *trace, kind, l, ablation.any() ? &ablation : nullptr);
    };
    source.headOff = [off = m_ablation.heads(static_cast<int>(kind))](int l, int h) {
        return std::find(off.begin(), off.end(), std::pair(l, h)) != off.end();
    };
    if (!m_neuron) {
        m_neuron = new NeuronDialog(worker(), this);
        // A new translation, step or kind: the window follows with the same layer, head and positions.
        const auto follow = [this] {
            if (m_neuron->isVisible() && m_neuron->terms())
                openNeuronView(m_neuron->layer(), m_neuron->head(), m_neuron->query(), m_neuron->key());
        };
        connect(this, &TranslatePage::resultReady, m_neuron, follow);
        connect(m_doc, &TranslationDocument::selectionChanged, m_neuron, [this, follow] {
            if (m_doc->kind() != m_neuronKind) follow();
        });
    }
    m_neuronKind = kind;
    m_neuron->setSource(std::move(source), layer, head, query, key);
    m_neuron->show();
    m_neuron->raise();
}

} // namespace attnlens::ui
