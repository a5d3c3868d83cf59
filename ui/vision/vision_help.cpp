// Help → What am I looking at? for the Vision page.
#include "ui/vision/vision_document.h"
#include "ui/vision/vision_page.h"

namespace attnlens::ui {

QString visionHelpTitle(const VisionDocument& doc) {
    if (doc.textMapShown()) return QObject::tr("Vision — where a text is (CLIP / SigLIP)");
    if (doc.probeQuery() && !doc.rollout()) return QObject::tr("Vision — the pooling probe (SigLIP)");
    return doc.rollout() ? QObject::tr("Vision — attention rollout")
                         : QObject::tr("Vision — patch attention");
}

QString visionHelpText(const VisionDocument& doc) {
    QString text =
        QObject::tr("<p>A vision transformer cuts the picture into square patches (a grid of tokens) and "
                    "adds one extra token, "
                    "<b>CLS</b>, whose final state is used for the prediction. Attention says, for a query "
                    "token, how much "
                    "it reads from every patch.</p>");
    if (!doc.hasCls())
        text += QObject::tr(
            "<p><b>SigLIP</b> has no CLS: after the last layer an attention-pooling head lets one learned "
            "<b>probe</b> vector attend over the patches (one map per head); what it gathers, through a "
            "small "
            "MLP, is the image embedding. Texts are scored each on their own — a sigmoid of exp(logit_scale) "
            "times the cosine plus logit_bias — so several may fit, or none; a patch's feature for the "
            "similarity map is the pooling head applied to that patch alone.</p>");
    if (doc.textMapShown())
        text += QObject::tr(
            "<p>CLIP embeds the picture (its CLS token, projected) and each typed text into one space; the "
            "zero-shot score of a text is exp(logit_scale) times the cosine of the two, softmaxed over the "
            "texts. <b>Similarity</b> maps the cosine of every patch's projected token with the text; "
            "<b>relevance</b> weighs the patches above the mean similarity by how much CLS draws on them "
            "(attention rollout through every layer). Both come from the same forward pass, without "
            "gradients; patch similarity is a rough guide (CLIP was trained on the CLS token only).</p>");
    else if (doc.rollout())
        text += QObject::tr(
            "<p><b>Rollout</b> multiplies the attention of layers 0 to the chosen one (each with the "
            "residual connection added as ½·I + ½·A), so it estimates how much of the query's final state "
            "comes from each patch through all those layers. It is an approximation, not the exact "
            "flow.</p>");
    else
        text += QObject::tr(
            "<p>The map shows one layer: the chosen query's row of the attention matrix, laid back onto "
            "the patch grid and over the picture. The heads grid shows every head of the layer side by "
            "side; the layer strip shows the same head at every depth.</p>");
    text += QObject::tr(
        "<p>Click a patch to make it the query (shift-click or drag selects several, their maps summed or "
        "averaged); "
        "click CLS to go back. The colour bar gives the weights' range. The predictions beside the "
        "picture are "
        "the classifier's top classes; for a picture unlike the training data they can be confident and "
        "still meaningless, and the page says so.</p>");
    return text;
}

} // namespace attnlens::ui
