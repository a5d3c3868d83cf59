// Help → What am I looking at? for the Attention (playground) page.
#include "ui/playground/playground_page.h"

namespace attnlens::ui {

QString playgroundHelpTitle() {
    return QObject::tr("Attention — scaled dot-product attention, step by step");
}

QString playgroundHelpText() {
    return QObject::tr(
        "<p>Attention(Q, K, V) = softmax(Q·Kᵀ / √d<sub>k</sub> + mask) · V, in five stages:</p>"
        "<ol><li><b>Scores</b> Q·Kᵀ: how well each query row matches each key row (a dot product).</li>"
        "<li><b>Scaled</b> by 1/√d<sub>k</sub>, so that wide vectors do not push the softmax into one-hot "
        "corners.</li>"
        "<li><b>Masked</b>: blocked pairs get −10⁹ (a causal mask hides later tokens, a padding mask hides "
        "padding).</li>"
        "<li><b>Weights</b>: a softmax along each row; every row sums to 1.</li>"
        "<li><b>Output</b>: each query's weighted sum of the value rows.</li></ol>"
        "<p>With h &gt; 1 heads, Q, K and V are split column-wise into h parts; each head runs the five "
        "stages "
        "on its part, the head outputs are concatenated and multiplied by W<sub>O</sub> (the Multi-head "
        "tab). "
        "Edit any number in Q, K, V or W<sub>O</sub> and every stage follows; click a cell to follow one "
        "number "
        "through the arithmetic.</p>");
}

} // namespace attnlens::ui
