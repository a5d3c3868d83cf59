#include "translate_driver.h"

#include "core/analysis/attention_maps.h"
#include "core/decode/trace_attention.h"
#include "core/text/marian_tokenizer.h"
#include "stall_meter.h"
#include "ui/shell/inference_worker.h"
#include "ui/translate/matrix_view.h"
#include "ui/translate/sentence_bar.h"
#include "ui/translate/translate_page.h"
#include "ui/widgets/heatmap_view.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QScrollBar>
#include <QTimer>
#include <QWheelEvent>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

using attnlens::AttentionKind;
using attnlens::ui::TokenRef;
using attnlens::ui::TokenSide;
using attnlens::ui::TranslatePage;

namespace {

std::optional<TokenRef> parseToken(const QString& t) {
    if (t.size() < 2 || (t[0] != QLatin1Char('s') && t[0] != QLatin1Char('t'))) return std::nullopt;
    bool ok = false;
    const int i = t.mid(1).toInt(&ok);
    if (!ok || i < 0) return std::nullopt;
    return TokenRef{t[0] == QLatin1Char('s') ? TokenSide::Source : TokenSide::Target, i};
}

void applySelection(TranslatePage* page, const TranslateScript& s) {
    auto* doc = page->document();
    if (!s.kind.isEmpty()) doc->setKind(*attnlens::parseAttentionKind(s.kind.toStdString()));
    if (s.layer >= 0) doc->setLayer(s.layer);
    if (!s.head.isEmpty()) {
        const attnlens::HeadSelection heads = attnlens::parseHeadSelection(s.head.toStdString());
        doc->setFusion(heads.fusion);
        doc->setHead(heads.head);
    }
    doc->setWordLevel(s.wordLevel);
    doc->setHideSpecial(s.hideSpecial);
    if (s.beamNode > 0) doc->setSelectedBeamNode(s.beamNode);
    if (!s.token.isEmpty()) doc->setSelectedToken(*parseToken(s.token));
    if (!s.view.isEmpty()) page->showView(*attnlens::ui::parseTranslateView(s.view));
}

} // namespace

QString validateScript(const TranslateScript& s) {
    if (!s.kind.isEmpty() && !attnlens::parseAttentionKind(s.kind.toStdString()))
        return QStringLiteral("--kind %1: expected encoder, decoder or cross").arg(s.kind);
    if (!s.view.isEmpty() && !attnlens::ui::parseTranslateView(s.view))
        return QStringLiteral(
                   "--view %1: expected matrix, model, lines, embeddings, beam, heads or difference")
            .arg(s.view);
    if (!s.token.isEmpty() && !parseToken(s.token))
        return QStringLiteral("--token %1: expected s<N> or t<N>").arg(s.token);
    if (!s.head.isEmpty()) {
        try {
            attnlens::parseHeadSelection(s.head.toStdString());
        } catch (const std::exception& e) {
            return QStringLiteral("--%1").arg(QString::fromUtf8(e.what()));
        }
    }
    return {};
}

void runTranslateScript(TranslatePage* page, const TranslateScript& s,
                        std::function<void(bool, QString)> done) {
    struct State {
        int phase = 0; // 0 waiting for the translation, 1 waiting for reset, 2 stepping, 3 done
        int remaining = 0;
    };
    auto state = std::make_shared<State>();
    auto finish = [page, s, done, state](bool ok, const QString& message) {
        if (state->phase == 3) return;
        state->phase = 3;
        if (ok) applySelection(page, s);
        // Let layouts settle and every view paint once before the grab.
        QTimer::singleShot(500, page, [done, ok, message] { done(ok, message); });
    };
    if (!s.input.isEmpty()) page->setInput(s.input);
    if (s.beam > 0) page->setBeamWidth(s.beam);
    if (s.maxTokens > 0) page->setMaxNewTokens(s.maxTokens);
    QObject::connect(page, &TranslatePage::failed, page, [finish](const QString& m) { finish(false, m); });
    QObject::connect(page, &TranslatePage::resultReady, page, [page, s, state, finish] {
        if (state->phase == 0) {
            if (s.steps < 0) return finish(true, {});
            state->phase = 1;
            page->reset();
        } else if (state->phase == 1) {
            if (s.steps == 0) return finish(true, {});
            state->phase = 2;
            state->remaining = s.steps;
            for (int i = 0; i < s.steps; ++i)
                page->stepForward();
        } else if (state->phase == 2) {
            if (--state->remaining == 0) finish(true, {});
        }
    });
    // The page translates by itself once its model has loaded; if it already has, start here.
    if (page->document()->hasModel() && !page->worker()->isBusy()) page->translate();
    QTimer::singleShot(60000, page, [finish] { finish(false, QStringLiteral("timed out after 60 s")); });
}

namespace {

// `rounds` times every head (and the mean) then every layer of `kind`, each switch followed by a synchronous
// repaint of the matrix view: the milliseconds of each, appended to head and layer.
void timeSwitches(TranslatePage* page, AttentionKind kind, int rounds, std::vector<double>& head,
                  std::vector<double>& layer) {
    auto* heatmap = page->matrixView()->heatmap();
    auto* doc = page->document();
    QElapsedTimer t;
    const int H = doc->headCount(kind), L = doc->layerCount(kind);
    for (int r = 0; r < rounds; ++r) {
        for (int h = -1; h < H; ++h) {
            t.start();
            doc->setHead(h);
            heatmap->viewport()->repaint();
            head.push_back(t.nsecsElapsed() / 1e6);
        }
        for (int l = 0; l < L; ++l) {
            t.start();
            doc->setLayer((l + 1) % L);
            heatmap->viewport()->repaint();
            layer.push_back(t.nsecsElapsed() / 1e6);
        }
    }
}

// Head and layer switches on the finished translation (cross-attention), each followed by a synchronous
// repaint of the matrix view; then the report of everything measured.
void benchSwitchesAndReport(TranslatePage* page, const std::vector<double>& translateTimes,
                            const std::vector<double>& completeTimes) {
    auto* doc = page->document();
    std::vector<double> head, layer;
    timeSwitches(page, AttentionKind::Cross, 5, head, layer);
    const auto trace = doc->trace();
    std::printf("model: %s\n", qPrintable(doc->modelDescription()));
    std::printf("input: %zu source pieces, %zu target pieces\n", trace->sourceTokens.size(),
                trace->targetTokens.size());
    printTimes("Translate -> first rendered heatmap", translateTimes);
    printTimes("Translate -> whole translation shown", completeTimes);
    printTimes("head switch -> repainted heatmap", head);
    printTimes("layer switch -> repainted heatmap", layer);
    std::fflush(stdout);
}

const QStringList& germanSentences() {
    static const QStringList sentences = {
        QStringLiteral(
            "Als wir gestern Abend nach der langen Arbeit endlich nach Hause kamen, wartete unsere "
            "kleine Tochter schon an der Tür."),
        QStringLiteral("Sie wollte uns unbedingt das Bild zeigen, das sie in der Schule für ihre Großmutter "
                       "gemalt hatte."),
        QStringLiteral("Wir haben uns sehr gefreut und das Bild an die Wand gehängt.")};
    return sentences;
}

// A German text of exactly `pieces` source pieces (</s> included): sentences repeated, then cut to length.
QString longInput(const attnlens::MarianTokenizer& tok, int pieces) {
    const QStringList& sentences = germanSentences();
    QStringList words;
    for (int i = 0;
         static_cast<int>(tok.encode(words.join(QLatin1Char(' ')).toStdString()).pieces.size()) < pieces; ++i)
        words << sentences[i % sentences.size()].split(QLatin1Char(' '));
    while (words.size() > 1 &&
           static_cast<int>(tok.encode(words.join(QLatin1Char(' ')).toStdString()).pieces.size()) > pieces)
        words.removeLast();
    return words.join(QLatin1Char(' '));
}

// The matrix view on a long input's encoder self-attention (the built-in model takes 512 positions): head
// and layer switches, zoom steps from the fitted view and pan steps, each followed by a synchronous repaint
// of the matrix — the frame time a user sees.
void benchLongInput(TranslatePage* page, std::function<void()> after) {
    auto* doc = page->document();
    const QString text = longInput(*doc->model().tokenizer, 512);
    page->setMaxNewTokens(8);
    page->setBeamWidth(1);
    page->sentenceBar()->setWholeInput(true); // the text as one input, not sentence by sentence
    page->setInput(text);
    QObject::connect(
        page, &TranslatePage::resultReady, page,
        [page, doc, after] {
            auto* heatmap = page->matrixView()->heatmap();
            doc->setKind(AttentionKind::EncoderSelf);
            heatmap->fitToView();
            heatmap->viewport()->repaint();
            std::vector<double> head, layer, zoom, pan;
            timeSwitches(page, AttentionKind::EncoderSelf, 3, head, layer);
            QElapsedTimer t;
            heatmap->fitToView();
            const QPoint centre = heatmap->viewport()->rect().center();
            for (int i = 0; i < 10; ++i) {
                t.start();
                QWheelEvent wheel(centre, heatmap->viewport()->mapToGlobal(centre), QPoint(), QPoint(0, 120),
                                  Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase, false);
                QCoreApplication::sendEvent(heatmap->viewport(), &wheel);
                heatmap->viewport()->repaint();
                zoom.push_back(t.nsecsElapsed() / 1e6);
            }
            heatmap->setCellSize(12);
            auto* hs = heatmap->horizontalScrollBar();
            auto* vs = heatmap->verticalScrollBar();
            for (int i = 0; i < 60; ++i) {
                t.start();
                hs->setValue(hs->maximum() * i / 59);
                vs->setValue(vs->maximum() * i / 59);
                heatmap->viewport()->repaint();
                pan.push_back(t.nsecsElapsed() / 1e6);
            }
            std::printf("long input: %zu source pieces, matrix %d x %d in a %d x %d pane\n",
                        doc->trace()->sourceTokens.size(), heatmap->rows(), heatmap->columns(),
                        heatmap->viewport()->width(), heatmap->viewport()->height());
            printTimes("512 tokens: head switch -> repainted", head);
            printTimes("512 tokens: layer switch -> repainted", layer);
            printTimes("512 tokens: zoom step -> repainted", zoom);
            printTimes("512 tokens: pan step -> repainted", pan);
            std::fflush(stdout);
            heatmap->fitToView();
            page->sentenceBar()->setWholeInput(false);
            after();
        },
        Qt::SingleShotConnection);
    page->translate();
}

// A 1 000-word German paragraph as the page takes it, sentence by sentence (issue 40): Translate until the
// first sentence's heatmap is repainted and until the paragraph's translation is shown, the meter measuring
// the GUI stall meanwhile (its phase); then five other sentences chosen, each until its heatmap is repainted.
void benchParagraph(TranslatePage* page, StallMeter* meter, std::function<void()> after) {
    QStringList words;
    for (int i = 0; words.size() < 1000; ++i)
        words << germanSentences()[i % germanSentences().size()].split(QLatin1Char(' '));
    struct State {
        QElapsedTimer clock;
        double first = 0;
        std::vector<double> choose;
        QTimer poll;
    };
    auto st = std::make_shared<State>();
    auto* heatmap = page->matrixView()->heatmap();
    auto finish = [page, st, words, after] {
        std::printf("paragraph: %lld words, %lld sentences, translated one by one\n",
                    static_cast<long long>(words.size()),
                    static_cast<long long>(page->sentenceBar()->sentences().size()));
        std::printf("%-40s %8.2f ms\n", "paragraph: Translate -> sentence 0 shown", st->first);
        printTimes("paragraph: sentence chosen -> repainted", st->choose);
        std::fflush(stdout);
        after();
    };
    // Then sentences 7, 14, …: each translated and shown, timed until its heatmap is repainted.
    auto choose = std::make_shared<std::function<void()>>();
    *choose = [page, st, heatmap, choose, finish] {
        if (st->choose.size() == 5) return finish();
        QObject::connect(
            page, &TranslatePage::resultReady, page,
            [st, heatmap, choose] {
                heatmap->viewport()->repaint();
                st->choose.push_back(st->clock.nsecsElapsed() / 1e6);
                QTimer::singleShot(0, *choose);
            },
            Qt::SingleShotConnection);
        st->clock.start();
        page->sentenceBar()->setCurrent(7 * static_cast<int>(st->choose.size() + 1));
        page->translate();
    };
    QObject::connect(
        page, &TranslatePage::resultReady, page,
        [st, heatmap] {
            heatmap->viewport()->repaint();
            st->first = st->clock.nsecsElapsed() / 1e6;
        },
        Qt::SingleShotConnection);
    st->poll.setInterval(5); // the paragraph's translation arrives from the worker
    QObject::connect(&st->poll, &QTimer::timeout, page, [page, st, meter, choose] {
        if (page->sentenceBar()->paragraphTranslation().isEmpty() || page->isBusy()) return;
        st->poll.stop();
        std::printf("%-40s %8.2f ms\n", "paragraph: Translate -> all translated",
                    st->clock.nsecsElapsed() / 1e6);
        if (meter) meter->pause();
        (*choose)();
    });
    if (meter) {
        meter->setPhase(QStringLiteral("translating a 1 000-word paragraph"));
        meter->resume();
    }
    page->setMaxNewTokens(64);
    page->setInput(words.join(QLatin1Char(' ')));
    st->clock.start();
    st->poll.start();
    page->translate();
}

// Times `repeats` translations of the page's input: to the first rendered heatmap (a long translation is
// shown as it grows: partialResult) and to the whole translation (resultReady); then `after`.
void benchTranslations(TranslatePage* page, int repeats,
                       std::function<void(const std::vector<double>&, const std::vector<double>&)> after) {
    struct State {
        std::vector<double> first, complete;
        bool firstSeen = false;
        QElapsedTimer clock;
        QMetaObject::Connection partial, ready;
    };
    auto st = std::make_shared<State>();
    auto* heatmap = page->matrixView()->heatmap();
    auto firstHeatmap = [heatmap, st] {
        if (st->firstSeen) return;
        st->firstSeen = true;
        heatmap->viewport()->repaint(); // the first heatmap is on screen when this returns
        st->first.push_back(st->clock.nsecsElapsed() / 1e6);
    };
    st->partial = QObject::connect(page, &TranslatePage::partialResult, page, firstHeatmap);
    st->ready = QObject::connect(page, &TranslatePage::resultReady, page,
                                 [page, heatmap, repeats, st, firstHeatmap, after] {
                                     firstHeatmap();
                                     heatmap->viewport()->repaint();
                                     st->complete.push_back(st->clock.nsecsElapsed() / 1e6);
                                     if (static_cast<int>(st->complete.size()) < repeats) {
                                         st->firstSeen = false;
                                         st->clock.start();
                                         page->translate();
                                         return;
                                     }
                                     QObject::disconnect(st->ready);
                                     QObject::disconnect(st->partial);
                                     after(st->first, st->complete);
                                 });
    st->clock.start();
    page->translate();
}

} // namespace

void runTranslateBench(TranslatePage* page, const QString& input, int repeats, StallMeter* meter,
                       std::function<void(int)> done) {
    page->setInput(QString()); // no automatic translation after loading: the bench presses Translate itself
    auto start = [page, input, repeats, meter, done] {
        page->showView(TranslatePage::View::Matrix);
        page->setInput(input);
        benchTranslations(
            page, repeats,
            [page, meter, done](const std::vector<double>& first, const std::vector<double>& all) {
                if (meter) meter->pause();
                benchSwitchesAndReport(page, first, all);
                benchLongInput(page, [page, meter, done] {
                    benchParagraph(page, meter, [meter, done] {
                        if (meter) meter->resume();
                        done(0);
                    });
                });
            });
    };
    if (page->document()->hasModel())
        start();
    else
        QObject::connect(page, &TranslatePage::modelLoaded, page, start, Qt::SingleShotConnection);
    QObject::connect(page, &TranslatePage::failed, page, [done](const QString& m) {
        std::fprintf(stderr, "error: %s\n", qPrintable(m));
        done(2);
    });
}
