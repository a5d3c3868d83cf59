#include "ui/vision/clip_text_box.h"

#include "ui/vision/vision_document.h"
#include "ui/widgets/page_parts.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace attnlens::ui {

ClipTextBox::ClipTextBox(VisionDocument* doc, QWidget* parent)
    : QGroupBox(tr("Texts"), parent), m_doc(doc), m_texts(new QLineEdit(this)), m_map(new QComboBox(this)),
      m_measure(new QComboBox(this)) {
    auto* layout = new QVBoxLayout(this);
    m_texts->setObjectName(QStringLiteral("clipTexts"));
    m_texts->setPlaceholderText(tr("a dog | a cat | a red car"));
    m_texts->setClearButtonEnabled(true);
    connect(m_texts, &QLineEdit::returnPressed, this, [this] { emit textsEntered(m_texts->text()); });
    layout->addWidget(m_texts);
    auto* form = new QFormLayout;
    m_map->setObjectName(QStringLiteral("textMap"));
    m_map->setToolTip(tr("Show where a text is in the picture instead of an attention map"));
    connect(m_map, &QComboBox::currentIndexChanged, this, [this](int i) { m_doc->setTextMap(i - 1); });
    form->addRow(tr("Map:"), m_map);
    m_measure->setObjectName(QStringLiteral("textMeasure"));
    m_measure->addItems({tr("Similarity (cosine)"), tr("Relevance (rollout × similarity)")});
    connect(m_measure, &QComboBox::currentIndexChanged, this,
            [this](int i) { m_doc->setTextRelevance(i == 1); });
    form->addRow(tr("Measure:"), m_measure);
    layout->addLayout(form);
    layout->addWidget(
        hint(tr("Gradient-free and from the same forward pass; a small tower's patch similarity "
                "is noisy — compare several texts."),
             this));
    refresh();
}

void ClipTextBox::refresh() {
    setVisible(m_doc->textSide() != nullptr);
    const bool siglip = m_doc->textSide() && m_doc->textSide()->siglip();
    setTitle(siglip ? tr("Texts (SigLIP)") : tr("Texts (CLIP)"));
    m_texts->setToolTip(
        siglip ? tr("Texts separated by '|'; Enter scores them against the picture: exp(logit_scale) · "
                    "cosine of the image and text embeddings + logit_bias, through a sigmoid — each text on "
                    "its own (several may fit the picture, or none)")
               : tr("Texts separated by '|'; Enter scores them against the picture (zero-shot: "
                    "exp(logit_scale) · cosine of the image and text embeddings, softmax over the texts)"));
    m_measure->setToolTip(
        siglip ? tr("Similarity: the cosine of each patch's feature (the pooling head applied to that patch "
                    "alone) with the text's embedding. Relevance: the pooling probe's attention through the "
                    "rollout (all layers, heads' mean) times each patch's similarity above the mean.")
               : tr("Similarity: the cosine of each patch's projected embedding (post_layernorm, "
                    "visual_projection) with the text's. Relevance: attention rollout from CLS (all layers, "
                    "heads' mean) times each patch's similarity above the mean — where the picture's summary "
                    "draws on patches like the text."));
    const QSignalBlocker b1(m_map), b2(m_measure);
    m_map->clear();
    m_map->addItem(tr("Attention maps (no text)"));
    const auto& image = m_doc->image();
    if (image)
        for (const ClipTextRun& r : image->texts)
            m_map->addItem(tr("%1 — %2 %")
                               .arg(QString::fromStdString(r.embedding.text))
                               .arg(100.0 * r.probability, 0, 'f', 1));
    m_map->setCurrentIndex(m_doc->textMapShown() ? m_doc->textMap() + 1 : 0);
    m_map->setEnabled(m_map->count() > 1);
    m_measure->setCurrentIndex(m_doc->textRelevance() ? 1 : 0);
    m_measure->setEnabled(m_doc->textMapShown());
    if (!m_texts->hasFocus()) {
        QStringList texts;
        for (const std::string& t : m_doc->texts())
            texts << QString::fromStdString(t);
        m_texts->setText(texts.join(QStringLiteral(" | ")));
        m_texts->setCursorPosition(0); // the first texts in view
    }
}

} // namespace attnlens::ui
