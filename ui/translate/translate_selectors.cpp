#include "ui/translate/translate_selectors.h"

#include "ui/translate/translation_document.h"
#include "ui/widgets/map_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>

#include <algorithm>

namespace attnlens::ui {

TranslateSelectors::TranslateSelectors(TranslationDocument* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_kind(new QComboBox(this)), m_layer(new QSpinBox(this)),
      m_head(new HeadCombo(this)), m_wordLevel(new QCheckBox(tr("Words"), this)),
      m_hideSpecial(new QCheckBox(tr("Hide special tokens"), this)),
      m_valueWeighted(valueWeightedBox(
          this, tr("key"), tr("Per head before the fusion; rollout and flow stay on the weights."))) {
    m_kind->setObjectName(QStringLiteral("attentionKind"));
    m_kind->addItem(tr("Encoder self-attention"), static_cast<int>(AttentionKind::EncoderSelf));
    m_kind->addItem(tr("Decoder self-attention"), static_cast<int>(AttentionKind::DecoderSelf));
    m_kind->addItem(tr("Cross-attention"), static_cast<int>(AttentionKind::Cross));
    m_layer->setObjectName(QStringLiteral("layer"));
    m_layer->setPrefix(tr("layer "));
    m_head->setObjectName(QStringLiteral("head"));
    m_head->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_wordLevel->setObjectName(QStringLiteral("wordLevel"));
    m_wordLevel->setToolTip(
        tr("Merge SentencePiece pieces into words: attention summed over a word's key pieces, "
           "averaged over its query pieces"));
    m_hideSpecial->setObjectName(QStringLiteral("hideSpecial"));
    m_hideSpecial->setToolTip(tr("Leave out </s> and <pad>; rows are renormalised over the remaining keys"));
    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->setSpacing(6);
    row->addWidget(new QLabel(tr("Show"), this));
    row->addWidget(m_kind);
    row->addWidget(m_layer);
    row->addWidget(m_head);
    row->addSpacing(8);
    row->addWidget(m_wordLevel);
    row->addWidget(m_hideSpecial);
    row->addWidget(m_valueWeighted);

    connect(m_kind, &QComboBox::activated, this,
            [this](int i) { m_doc->setKind(static_cast<AttentionKind>(m_kind->itemData(i).toInt())); });
    connect(m_layer, &QSpinBox::valueChanged, this, [this](int v) { m_doc->setLayer(v); });
    connect(m_head, &HeadCombo::selectionChanged, this, [this](HeadSelection heads) {
        using Through = TranslationDocument::Through;
        const HeadCombo::Through through = m_head->through();
        if (through != HeadCombo::Through::Layer) {
            m_doc->setFusion(HeadFusion::Mean);
            m_doc->setThrough(through == HeadCombo::Through::Rollout ? Through::Rollout : Through::Flow);
            return;
        }
        m_doc->setThrough(Through::Layer);
        m_doc->setFusion(heads.fusion);
        m_doc->setHead(heads.head);
    });
    connect(m_wordLevel, &QCheckBox::toggled, m_doc, &TranslationDocument::setWordLevel);
    connect(m_hideSpecial, &QCheckBox::toggled, m_doc, &TranslationDocument::setHideSpecial);
    connect(m_valueWeighted, &QCheckBox::toggled, m_doc, &TranslationDocument::setValueWeighted);
}

void TranslateSelectors::sync() {
    const QSignalBlocker b1(m_kind), b2(m_layer), b3(m_head), b4(m_wordLevel), b5(m_hideSpecial),
        b6(m_valueWeighted);
    m_kind->setCurrentIndex(m_kind->findData(static_cast<int>(m_doc->kind())));
    const int layers = std::max(1, m_doc->layerCount(m_doc->kind()));
    m_layer->setRange(0, layers - 1); // numbered from 0, as everywhere
    m_layer->setSuffix(tr(" of 0–%1").arg(layers - 1));
    m_layer->setValue(m_doc->layer());
    m_head->setHeadCount(m_doc->headCount(m_doc->kind()), m_doc->kind() == AttentionKind::EncoderSelf);
    const auto through = !m_doc->showsThrough() ? HeadCombo::Through::Layer
                         : m_doc->through() == TranslationDocument::Through::Rollout
                             ? HeadCombo::Through::Rollout
                             : HeadCombo::Through::Flow;
    m_head->setSelection({m_doc->head(), m_doc->fusion()}, through);
    m_wordLevel->setChecked(m_doc->wordLevel());
    m_hideSpecial->setChecked(m_doc->hideSpecial());
    m_valueWeighted->setChecked(m_doc->valueWeightedSwitch());
    m_valueWeighted->setEnabled(!m_doc->trace() || m_doc->canValueWeight());
}

} // namespace attnlens::ui
