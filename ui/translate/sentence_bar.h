#pragma once
// SentenceBar: Translate's paragraph mode (issue 38). Input of two or more sentences (splitSentences) is
// translated sentence by sentence — the built-in model was trained on single sentences and collapses on a
// paragraph given whole — and this bar, shown only then, chooses the sentence every view shows and holds the
// paragraph's translation, each sentence's in turn. "Whole input" translates the input as one (for models
// trained on long inputs). Object names "sentence", "wholeInput", "paragraphTranslation". GUI thread only.
//
//   const QString now = bar->prepare(input);       // the sentence to translate and show (or all of it)
//   …translate `now` step by step…
//   bar->translateParagraph(model, options);       // every sentence on the worker, then the paragraph
//   connect(bar, &SentenceBar::sentenceChosen, page, &Page::translate);

#include "core/decode/decode_session.h"
#include "core/models/marian_folder.h"

#include <QStringList>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;

namespace attnlens::ui {

class InferenceWorker;

class SentenceBar : public QWidget {
    Q_OBJECT
public:
    SentenceBar(InferenceWorker* worker, QWidget* parent);
    // The text to translate now for `input`: the sentence chosen, or all of it (one sentence, whole input on,
    // or text that is not UTF-8 — the translation then says why). Keeps the choice when the input's sentences
    // are the same as before.
    QString prepare(const QString& input);
    // Translates every sentence on the worker (as `options` says), then shows the paragraph's translation.
    // Nothing for a single sentence or with whole input on, nor when the same sentences with the same options
    // are translated already or on their way (choosing another sentence does not translate them all again).
    void translateParagraph(const MarianFolder& model, const DecodeOptions& options);

    QStringList sentences() const { return m_sentences; }
    int current() const; // the sentence shown, from 0 (0 when there is one)
    void setCurrent(int index);
    bool wholeInput() const;
    void setWholeInput(bool whole);
    QString paragraphTranslation() const { return m_translation; } // empty until translated

signals:
    void sentenceChosen(); // another sentence chosen, or whole input switched: translate again

private:
    InferenceWorker* m_worker;
    QComboBox* m_sentence;
    QCheckBox* m_whole;
    QLabel* m_count;
    QLabel* m_paragraph;
    QStringList m_sentences;
    QString m_translation;
    int m_generation = 0; // the paragraph job whose result is still wanted
    // What the paragraph's translation (done or on its way in job m_job) is of; empty: none.
    struct Key {
        QStringList sentences;
        std::optional<int> beams, maxTokens;
        std::vector<std::vector<int>> encoderOff, decoderOff, crossOff;
        bool operator==(const Key&) const = default;
    };
    Key m_key;
    int m_job = -1;      // the paragraph's job on the worker now (one sentence)
    QStringList m_parts; // the paragraph's sentences translated so far
    void translateNext(const MarianFolder& model, const DecodeOptions& options, int generation);
};

} // namespace attnlens::ui
