// The Translate page's attention flow (issue 21, M6) through the encoder's layers: one max-flow per source
// token on the worker (core/analysis/attention_flow), stored in the document; inputs beyond the budget fall
// back to rollout with a note.
#include "core/analysis/attention_flow.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"

namespace attnlens::ui {

void TranslatePage::requestFlow() {
    if (!m_doc->flowPending()) return;
    const TranslationDocument::FlowKey key = m_doc->flowKey();
    if (key == m_flowRequested) return;                                           // on its way
    const Tensor attentions = m_doc->attentionTensor(AttentionKind::EncoderSelf); // [L, H, S, S]
    const int tokens = static_cast<int>(attentions.dim(2));
    const int64_t cost = attentionFlowCost(key.layer + 1, tokens) * tokens;
    if (cost > kFlowBudget) {
        showStatus(
            tr("Attention flow of all %1 source tokens through %2 layers is %3× more work than the budget "
               "(≈ 3 s); showing rollout instead.")
                .arg(tokens)
                .arg(key.layer + 1)
                .arg(static_cast<double>(cost) / static_cast<double>(kFlowBudget), 0, 'f', 1));
        m_doc->setThrough(TranslationDocument::Through::Rollout);
        return;
    }
    m_flowRequested = key;
    worker()->run<RowMatrix>(
        tr("Attention flow"),
        [attentions, key, tokens](const Callbacks& cb) {
            FlowOptions options;
            options.fusion = key.fusion;
            options.lastLayer = key.layer;
            RowMatrix flow(tokens, tokens);
            for (int q = 0; q < tokens; ++q) {
                const std::vector<float> row = attentionFlow(attentions, q, options, cb);
                flow.row(q) = Eigen::Map<const Eigen::RowVectorXf>(row.data(), tokens);
                cb.report(double(q + 1) / tokens,
                          "source token " + std::to_string(q + 1) + " of " + std::to_string(tokens));
            }
            return flow;
        },
        [this, key](RowMatrix flow) {
            m_flowRequested = {};
            m_doc->setFlowMatrix(key, std::move(flow));
        });
}

} // namespace attnlens::ui
