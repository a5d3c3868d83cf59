#include "ui/translate/sentence_bar.h"

#include "core/text/sentence_split.h"
#include "ui/shell/inference_worker.h"
#include "ui/widgets/page_parts.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace attnlens::ui {

SentenceBar::SentenceBar(InferenceWorker* worker, QWidget* parent)
    : QWidget(parent), m_worker(worker), m_sentence(new QComboBox(this)), m_whole(new QCheckBox(this)),
      m_count(new QLabel(this)), m_paragraph(new QLabel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 0, 2, 0);
    auto* row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Sentence"), this));
    m_sentence->setObjectName(QStringLiteral("sentence"));
    m_sentence->setToolTip(tr("The sentence every view shows; the input is translated sentence by sentence"));
    m_sentence->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_sentence->setMinimumContentsLength(28);
    row->addWidget(m_sentence);
    row->addWidget(m_count);
    m_whole->setObjectName(QStringLiteral("wholeInput"));
    m_whole->setText(tr("Whole input"));
    m_whole->setToolTip(tr("Translate the input as one, not sentence by sentence (for models trained on long "
                           "inputs; the built-in model was trained on single sentences)"));
    row->addSpacing(8);
    row->addWidget(m_whole);
    row->addStretch(1);
    layout->addLayout(row);
    m_paragraph->setObjectName(QStringLiteral("paragraphTranslation"));
    m_paragraph->setWordWrap(true);
    m_paragraph->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_paragraph);
    hide();
    connect(m_sentence, &QComboBox::activated, this, &SentenceBar::sentenceChosen);
    const auto lost = [this](int id) { // cancelled or failed: the next Translate does it again
        if (id != m_job) return;
        m_key = {};
        m_paragraph->clear();
    };
    connect(m_worker, &InferenceWorker::cancelled, this, lost);
    connect(m_worker, &InferenceWorker::failed, this, lost);
    connect(m_whole, &QCheckBox::toggled, this, [this] {
        m_sentence->setEnabled(!m_whole->isChecked());
        emit sentenceChosen();
    });
}

QString SentenceBar::prepare(const QString& input) {
    QStringList sentences;
    try {
        for (const std::string& s : sentencesOf(input.toStdString()))
            sentences << QString::fromStdString(s);
    } catch (const std::exception&) { // not UTF-8: translated whole, the translation says why
    }
    if (sentences != m_sentences) {
        ++m_generation; // a paragraph job for the old sentences is no longer wanted
        m_key = {};
        m_sentences = sentences;
        m_translation.clear();
        m_paragraph->clear();
        const QSignalBlocker quiet(m_sentence);
        m_sentence->clear();
        for (int i = 0; i < m_sentences.size(); ++i)
            m_sentence->addItem(QStringLiteral("%1 · %2").arg(i).arg(m_sentences[i]));
        m_count->setText(tr("of %1 (from 0)").arg(m_sentences.size()));
    }
    setVisible(m_sentences.size() > 1);
    if (m_sentences.size() < 2 || m_whole->isChecked()) return input;
    return m_sentences[current()];
}

void SentenceBar::translateParagraph(const MarianFolder& model, const DecodeOptions& options) {
    const Key key{m_sentences,
                  options.numBeams,
                  options.maxNewTokens,
                  options.ablation.encoder,
                  options.ablation.decoder,
                  options.ablation.cross};
    if (m_sentences.size() >= 2 && !m_whole->isChecked() && key == m_key) return; // done or on its way
    const int generation = ++m_generation;
    m_key = {};
    if (m_sentences.size() < 2 || m_whole->isChecked()) return;
    m_key = key;
    m_parts.clear();
    translateNext(model, options, generation);
}

// One sentence per job, the next submitted when it is done: a sentence the user chooses meanwhile is queued
// behind one sentence, not behind the whole paragraph.
void SentenceBar::translateNext(const MarianFolder& model, const DecodeOptions& options, int generation) {
    const auto n = static_cast<int>(m_sentences.size());
    if (static_cast<int>(m_parts.size()) == n) {
        m_translation = m_parts.join(QLatin1Char(' '));
        m_paragraph->setText(tr("<b>Paragraph:</b> %1").arg(m_translation.toHtmlEscaped()));
        return;
    }
    m_paragraph->setText(tr("Paragraph: translating sentence %1 of %2 (from 0)…").arg(m_parts.size()).arg(n));
    m_job = m_worker->run<std::string>(
        tr("Translating the paragraph"),
        [model, options, sentence = m_sentences[m_parts.size()].toStdString()](const Callbacks& cb) {
            DecodeSession session(model.model, model.tokenizer, sentence, options);
            session.run(cb);
            return session.trace()->translation;
        },
        [this, model, options, generation](std::string out) {
            if (generation != m_generation) return; // another input or setting took over
            m_parts << QString::fromStdString(out);
            translateNext(model, options, generation);
        });
}

int SentenceBar::current() const {
    return std::max(0, m_sentence->currentIndex());
}

void SentenceBar::setCurrent(int index) {
    if (index >= 0 && index < m_sentence->count()) m_sentence->setCurrentIndex(index);
}

bool SentenceBar::wholeInput() const {
    return m_whole->isChecked();
}

void SentenceBar::setWholeInput(bool whole) {
    const QSignalBlocker quiet(m_whole);
    m_whole->setChecked(whole);
    m_sentence->setEnabled(!whole);
}

} // namespace attnlens::ui
