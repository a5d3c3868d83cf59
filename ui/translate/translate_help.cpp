// Help → What am I looking at? for the Translate page: one text per view and attention kind, for students.
#include "ui/translate/translate_page.h"
#include "ui/translate/translation_document.h"

namespace attnlens::ui {

namespace {

QString kindParagraph(AttentionKind kind) {
    switch (kind) {
    case AttentionKind::EncoderSelf:
        return QObject::tr(
            "<p><b>Encoder self-attention.</b> Every German piece (row, the query) looks at every German "
            "piece "
            "(column, the key). A row's colours are the weights of a softmax, so each row sums to 1. Layer 0 "
            "often looks at neighbours; later layers mix in words further away.</p>");
    case AttentionKind::DecoderSelf:
        return QObject::tr(
            "<p><b>Masked decoder self-attention.</b> Each English piece being written (row) looks back at "
            "the "
            "English pieces written so far (columns). The upper triangle is empty: the causal mask hides the "
            "future, because while decoding the future does not exist yet.</p>");
    case AttentionKind::Cross:
        return QObject::tr(
            "<p><b>Cross-attention.</b> Each English piece (row) looks at the German sentence (columns) "
            "through "
            "the encoder's output. This is where alignment shows: a bright cell says \"while writing this "
            "word, "
            "the model read that one\". It is a weight, not a proof of what caused the word.</p>");
    }
    return {};
}

} // namespace

QString translateHelpTitle(TranslateView view) {
    switch (view) {
    case TranslateView::Matrix:
        return QObject::tr("Translate — attention matrix");
    case TranslateView::Model:
        return QObject::tr("Translate — every layer and head");
    case TranslateView::Lines:
        return QObject::tr("Translate — attention as lines");
    case TranslateView::Embeddings:
        return QObject::tr("Translate — embeddings");
    case TranslateView::Beam:
        return QObject::tr("Translate — beam search tree");
    case TranslateView::Heads:
        return QObject::tr("Translate — what every head does");
    case TranslateView::Difference:
        return QObject::tr("Translate — difference maps");
    case TranslateView::Lens:
        return QObject::tr("Translate — the decoder read out layer by layer");
    }
    return QObject::tr("Translate");
}

QString translateHelpText(TranslateView view, AttentionKind kind) {
    const QString stepping = QObject::tr(
        "<p><b>Stepping.</b> The model writes the translation one piece at a time (greedy or beam search). ◀ "
        "/ ▶ "
        "(Alt+Left / Alt+Right) move through those steps; at step t you see the attention the model computed "
        "while choosing piece t, captured during decoding, not re-computed afterwards.</p>");
    const QString pieces =
        QObject::tr("<p><b>Pieces.</b> Words are split into SentencePiece pieces (▁ marks the "
                    "start of a word). \"Word level\" "
                    "sums a word's pieces so rows and columns become words.</p>");
    switch (view) {
    case TranslateView::Matrix:
        return kindParagraph(kind) +
               QObject::tr(
                   "<p>Rows are queries, columns are keys; the colour bar gives the scale. Pick the layer "
                   "and "
                   "the "
                   "head (or the mean over heads) above; the strip on the right shows every head of this "
                   "layer "
                   "at once. Hover a cell for its exact weight; click to follow a row. Ctrl+wheel zooms, "
                   "drag "
                   "pans, 0 fits.</p>") +
               pieces + stepping;
    case TranslateView::Model:
        return kindParagraph(kind) +
               QObject::tr(
                   "<p>One small map per layer (rows, from 0 at the top) and head (columns). Looking down a "
                   "column of the grid shows how one head's role changes with depth; heads that look alike "
                   "are "
                   "often redundant. Click a map to open it in the Matrix view.</p>") +
               stepping;
    case TranslateView::Lines:
        return kindParagraph(kind) +
               QObject::tr(
                   "<p>The same weights as the matrix, drawn as lines from queries (left) to keys (right); a "
                   "line's thickness and opacity is its weight. Hover a token to see only its lines. Lines "
                   "read "
                   "more easily than a matrix for short sentences; for long ones the matrix is "
                   "clearer.</p>") +
               stepping;
    case TranslateView::Embeddings:
        return QObject::tr(
                   "<p>What enters the first layer. Each row is a piece, each column one of the d_model "
                   "dimensions. The token embedding (scaled by √d_model in Marian) plus the sinusoidal "
                   "position "
                   "encoding gives the input; the position map shows the fixed sine and cosine waves that "
                   "tell "
                   "the model where a piece stands. The colour bar is shared per map.</p>") +
               pieces;
    case TranslateView::Beam:
        return QObject::tr(
                   "<p>Beam search keeps the b best partial translations at every step instead of only one. "
                   "Each node is a piece; a path from the left is a hypothesis, its score the sum of log "
                   "probabilities. Pruned branches end early; the final translation is highlighted. Click a "
                   "node "
                   "to see the attention at that step. Ctrl+wheel zooms, the Fit button shows the whole "
                   "tree.</p>") +
               stepping;
    case TranslateView::Heads:
        return kindParagraph(kind) +
               QObject::tr(
                   "<p>Every head of every layer summed up in a few numbers for the sentence and step on "
                   "screen. "
                   "<b>Entropy</b> near 0: the head looks at one piece; near 1: everywhere. <b>Distance</b>: "
                   "how "
                   "far it looks, in pieces. <b>Sink</b>: how much it parks on &lt;/s&gt; or the start "
                   "token, "
                   "often a sign of a head with nothing to do for this input. <b>Diagonal</b> and "
                   "<b>previous</b>: "
                   "heads that look at the token itself or the one before it. Colour the grid by one of "
                   "them, "
                   "sort "
                   "the table by any column, click a head to open it in the Matrix view. "
                   "<code>attnlens-cli heads --src-file F</code> averages them over many sentences.</p>");
    case TranslateView::Difference:
        return QObject::tr(
            "<p><b>A</b> is a matrix you pinned; <b>B</b> is the matrix the Matrix tab shows now — change "
            "the "
            "sentence, step back or forth, switch kind, layer or head, or open another model. <b>A − B</b> "
            "is "
            "red where A attends more and blue where B does, on a symmetric scale. Rows and columns are "
            "matched "
            "by position when the tokens agree, else by token; tokens only one side has are listed under the "
            "maps. The Jensen–Shannon divergence compares each matched row as a distribution: 0 = the same, "
            "1 bit = nothing in common. <code>attnlens-cli diff A.json B.json</code> does the same with "
            "exports.</p>");
    case TranslateView::Lens:
        return QObject::tr(
            "<p>The logit lens: the decoder's stream at every target position, read out after each layer "
            "through the model's own LM head and final_logits_bias (Marian's layers normalise after each "
            "sub-layer, so there is no final norm to apply). Each cell is the piece the decoder would say if "
            "it stopped there, coloured by its probability; the last row is the translation itself. Click a "
            "column: the chosen piece's rank and probability layer by layer. <code>attnlens-cli lens "
            "--logit-lens --model DIR \"sentence\"</code> prints the same.</p>");
    }
    return {};
}

} // namespace attnlens::ui
